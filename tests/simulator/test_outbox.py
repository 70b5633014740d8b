"""The outbox relay (simulator.engine.outbox): an event written to the outbox reaches the log at
the relay's next poll, half an interval later on average and at most one, and that delay counts
in its latency."""

from __future__ import annotations

import random

import numpy as np
import pytest

from simulator import simulate
from simulator.design import Design
from simulator.engine import Workload
from simulator.engine.eventlog import build_topic
from simulator.engine.outbox import OutboxRelay, outbox_relay
from simulator.engine.run import OUTBOX_RELAY, make_rngs
from simulator.simulation import run_workload
from tests.simulator.faults.builders import course_scenario, reference, scenario


def relayed_design(interval_ms: float) -> Design:
    return Design.model_validate(
        {"data_model": {"outbox": True, "outbox_relay_poll_interval_ms": interval_ms}}
    )


def test_an_event_is_published_at_the_first_poll_at_or_after_its_write() -> None:
    relay = OutboxRelay(interval_s=0.5, phase_s=0.2)
    written = np.array([0.0, 0.2, 0.21, 0.69, 0.7, 0.71, 3.0])
    assert relay.publish_times(written).tolist() == pytest.approx(
        [0.2, 0.2, 0.7, 0.7, 0.7, 1.2, 3.2]
    )


def test_the_wait_is_half_an_interval_on_average_and_never_more_than_one() -> None:
    written = np.sort(np.random.default_rng(3).uniform(0.0, 1000.0, 200_000))
    relay = OutboxRelay(interval_s=2.0, phase_s=0.7)
    delay = relay.publish_times(written) - written
    assert delay.min() >= 0.0 and delay.max() <= 2.0
    assert delay.mean() == pytest.approx(1.0, abs=0.01)


def test_the_relay_keeps_the_order_of_the_rows() -> None:
    written = np.sort(np.random.default_rng(4).uniform(0.0, 100.0, 10_000))
    published = OutboxRelay(interval_s=1.5, phase_s=0.4).publish_times(written)
    assert np.all(np.diff(published) >= 0.0)


def test_deterministic_mode_waits_exactly_the_mean() -> None:
    relay = outbox_relay(relayed_design(400), deterministic=True, rng=random.Random(1))
    assert relay == OutboxRelay(0.4, None)
    assert relay.publish_times(np.array([1.0, 2.0])).tolist() == [1.2, 2.2]


def test_no_outbox_no_relay() -> None:
    assert outbox_relay(Design(), deterministic=False, rng=random.Random(1)) is None


def test_the_phase_of_the_polls_comes_from_the_seed() -> None:
    def phase(seed: int) -> float | None:
        relay = outbox_relay(relayed_design(1000), False, make_rngs(seed)[1][OUTBOX_RELAY])
        assert relay is not None
        return relay.phase_s

    assert phase(1) == phase(1)
    assert phase(1) != phase(2)
    assert all(p is not None and 0.0 <= p < 1.0 for p in (phase(1), phase(2), phase(3)))


def test_the_relays_generator_leaves_the_other_generators_as_they_were() -> None:
    """The relay's stream is one more child of the seed's SeedSequence: the workload's and the
    groups' generators are the children they were without it (results without an outbox keep)."""
    workload_rng, rngs = make_rngs(5)
    children = np.random.SeedSequence(5).spawn(4)
    expected = np.random.Generator(np.random.PCG64(children[0])).random(3)
    assert workload_rng.random(3).tolist() == expected.tolist()
    seed_of_agent = int(children[1].generate_state(2, np.uint64)[0])
    assert rngs["agent"].random() == random.Random(seed_of_agent).random()


def test_the_log_holds_publish_times_and_the_topic_keeps_write_times() -> None:
    d = Design.model_validate(
        {
            "event_log": {"partitions": 2, "partition_key": "event_id"},
            "data_model": {"outbox": True, "outbox_relay_poll_interval_ms": 1000},
        }
    )
    load = Workload.from_arrays(10.0, agent=([0.1, 0.2, 1.5, 9.9], [0.1] * 4)).groups["agent"]
    topic = build_topic(d, load, OutboxRelay(1.0, 0.0))
    assert topic.arrival_sorted_s.tolist() == [1.0, 1.0, 2.0, 10.0]
    by_write = dict(zip(topic.written_s.tolist(), topic.arrival_s.tolist(), strict=True))
    assert by_write == {0.1: 1.0, 0.2: 1.0, 1.5: 2.0, 9.9: 10.0}
    assert topic.log_end(9.99) == 3  # the event written at 9.9 s is still in the outbox


def test_the_relay_delay_counts_in_latency_not_in_the_wait_in_the_log() -> None:
    """One event a second, 0.1 s steps, deterministic: each waits 0.5 s (half of a 1 s poll
    interval) in the outbox, then starts at once."""
    workload = Workload.from_arrays(120.0, agent=([k + 0.25 for k in range(100)], [0.1] * 100))
    log = {"event_log": {"partitions": 4, "partition_key": "event_id"}}
    outbox = {"data_model": {"outbox": True, "outbox_relay_poll_interval_ms": 1000}}
    s = scenario(None, duration_seconds=120, deterministic=True)
    direct = run_workload(Design.model_validate(log), s, workload, 1).metrics
    relayed = run_workload(Design.model_validate({**log, **outbox}), s, workload, 1).metrics
    assert direct.latency_mean_s == pytest.approx(0.1)
    assert relayed.latency_mean_s == pytest.approx(0.6)
    assert relayed.wait_mean_s == pytest.approx(0.0, abs=1e-9)
    assert direct.wait_mean_s == pytest.approx(0.0, abs=1e-9)
    assert relayed.processed == direct.processed == 100


def test_a_slow_relay_raises_the_peaks_latency() -> None:
    """Course scenario peak, seed 1: the reference's 200 ms relay against 5 s polls. Each step
    event waits 2.4 s more on average in the outbox (half the difference of the intervals), and
    the events a poll publishes together queue a little; a run's steps follow one another, so
    every hop of a run pays it: the run's latency grows by the hops x 2.4 s at least."""
    s = course_scenario("peak")
    fast = simulate(reference(), s, 1).metrics
    slow = simulate(reference(data_model={"outbox_relay_poll_interval_ms": 5000}), s, 1).metrics
    assert slow.latency_p50_s > fast.latency_p50_s + 2.0
    assert slow.latency_p95_s > fast.latency_p95_s + 1.0
    assert 2.4 - 0.3 <= slow.latency_mean_s - fast.latency_mean_s <= 2.4 + 2.0
    assert slow.run_latency_p50_s is not None and fast.run_latency_p50_s is not None
    hops = 3 + 3 * 2 + 5  # planner, longest researcher (call, write pairs), writer, reviewer
    assert slow.run_latency_p50_s - fast.run_latency_p50_s > hops * 2.4
