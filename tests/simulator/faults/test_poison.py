"""Poison messages (issue item 6, worked item 8): retries stall the partition 31 s with about 12.9
events behind; no limit stalls it for good; a dead-letter queue lets the line move; per-key
quarantine keeps a key's order, and without it later events of the key are applied first."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from simulator import simulate
from simulator.faults.poison import PoisonEvents
from simulator.poison import backoff_schedule, poison_stall
from tests.simulator.faults.builders import (
    course_scenario,
    design,
    known_bad,
    reference,
    run,
    single_stage,
)

RETRY = {"max_attempts": 6, "base_backoff_seconds": 1, "max_backoff_seconds": 60, "jitter": "none"}


def worked(deterministic: bool, key: str = "event_id", **failures: Any):
    """Item 8: 20 events/s over 48 partitions (0.4167/s each), steps of 0.1 s, retries waiting
    1, 2, 4, 8, 16 s; 1 event in 500 is poison. Keyed by event id, a partition gets every 48th
    event; keyed by arrival time, a random partition each (Poisson arrivals stay Poisson)."""
    d = design(
        event_log={"partitions": 48, "partition_key": key},
        consumers={
            "agent": {"instances": 4, "concurrency_per_instance": 12, "max_poll_records": 48}
        },
        failures={"retry": RETRY, "dead_letter_queue": {"enabled": True}, **failures},
    )
    s = single_stage(
        20, 1800, 0.1, [{"kind": "poison", "rate": 0.002}], deterministic=deterministic
    )
    sim, result = run(d, s, 1)
    return sim.layer(PoisonEvents).states["agent"], result


def test_retries_stall_the_partition_31_seconds() -> None:
    state, result = worked(True)
    given_up = [x for x in state.poison.values() if x.seconds is not None]
    assert len(given_up) > 40
    assert all(x.seconds == pytest.approx(31.0) for x in given_up)
    assert sum(backoff_schedule(5)) == 31
    # Evenly spaced arrivals every 2.4 s: 12 of them land within a 31 s stall.
    alone = [x.behind for x in given_up if (x.partition, x.offset - 1) not in state.poison]
    assert alone and set(alone) == {12}
    m = result.metrics
    assert m.dead_lettered == len(given_up)
    assert m.lost == 0


def test_about_12_9_events_queue_behind_with_poisson_arrivals() -> None:
    expected = poison_stall([1, 2, 4, 8, 16], 20, 48).events_behind
    assert expected == pytest.approx(12.92, abs=0.01)
    state, _ = worked(False, key="arrival_timestamp")
    behind = [
        x.behind
        for x in state.poison.values()
        if x.seconds is not None and (x.partition, x.offset - 1) not in state.poison
    ]
    sem = np.std(behind, ddof=1) / np.sqrt(len(behind))
    assert np.mean(behind) == pytest.approx(expected, abs=3 * sem)


def test_without_a_retry_limit_the_partition_stalls_for_good() -> None:
    state, result = worked(True, retry={**RETRY, "max_attempts": None})
    m = result.metrics
    assert (m.dead_lettered, m.lost) == (0, 0)
    first = min(
        state.poison.values(), key=lambda x: x.reached_s if x.reached_s == x.reached_s else 1e18
    )
    assert first.given_up_s is None
    assert first.behind > 0.9 * (1800 - first.reached_s) * 20 / 48
    assert m.drain_seconds is None


def test_without_a_dead_letter_queue_poison_events_are_dropped() -> None:
    state, result = worked(True, dead_letter_queue={"enabled": False})
    given_up = sum(1 for x in state.poison.values() if x.seconds is not None)
    assert result.metrics.lost == given_up > 0
    assert result.metrics.dead_lettered == 0


def test_course_poison_quarantine_keeps_order_where_a_key_is_shared() -> None:
    """The course's poison scenario has poison on the agent group (1 step event in 1,000) and on
    the state group (1 write in 500). Keyed by task, a parked agent step's task produces nothing
    more, so nothing of its key overtakes it; but a model call's state writes share its task's key,
    so a parked state write has later writes of its key behind it: with quarantine they are parked
    behind it, without it each is applied ahead of it (an order violation). Keyed by run, the run's
    other tasks share the key too, in both groups."""
    s = course_scenario("poison")
    sim, result = run(reference(), s)
    ref = result.metrics
    states = sim.layer(PoisonEvents).states
    assert set(states) == {"agent", "state"}
    assert (ref.order_violations, ref.lost) == (0, 0)
    assert states["agent"].quarantined == 0  # nothing of a parked step's task comes after it
    behind = states["state"].quarantined
    assert behind > 0  # the later writes of a parked write's key
    given_up = sum(1 for st in states.values() for x in st.poison.values() if x.seconds is not None)
    assert ref.dead_lettered == given_up + behind
    # Without quarantine the writes parked behind are applied ahead of their poison write.
    loose_task = simulate(known_bad("no-quarantine"), s).metrics
    assert loose_task.order_violations == behind
    assert loose_task.dead_lettered == given_up
    quarantined = simulate(reference(event_log={"partition_key": "run_id"}), s).metrics
    loose = simulate(
        reference(event_log={"partition_key": "run_id"}, failures={"quarantine_per_key": False}), s
    ).metrics
    assert quarantined.order_violations == 0
    assert loose.order_violations > loose_task.order_violations  # a run key is shared more widely
    assert quarantined.dead_lettered > loose.dead_lettered  # the later steps parked behind
    unlimited = simulate(known_bad("unlimited-retry"), s).metrics
    assert (unlimited.dead_lettered, unlimited.lost) == (0, 0)
    assert unlimited.lag_total_max > ref.lag_total_max
    # Without a dead-letter queue the poison events are dropped, and nothing is parked behind
    # them (there is no queue to park in): exactly the events the reference gave up are lost.
    dropped = simulate(known_bad("no-dead-letter-queue"), s).metrics
    assert dropped.lost == given_up
    assert dropped.dead_lettered == 0
