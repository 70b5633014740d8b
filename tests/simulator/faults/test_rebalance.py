"""Slow batches over max.poll.interval.ms and rebalance faults (issue item 2, worked item 3)."""

from __future__ import annotations

from simulator import simulate
from simulator.engine import Workload
from simulator.faults.rebalance import SlowBatches
from tests.simulator.faults.builders import course_scenario, design, reference, run_arrays

FIFTY = 50


def fifty_records(step_s: float, dedupe: str, duration: float = 2400.0):
    """Worked item 3: a batch of 50 records fetched at once by one consumer (one partition, two
    members, max.poll.records 50, max.poll.interval.ms 300000), each step ``step_s`` seconds."""
    d = design(
        event_log={"partitions": 1},
        delivery={"dedupe": dedupe},
        consumers={
            "agent": {
                "instances": 2,
                "concurrency_per_instance": 1,
                "max_poll_records": FIFTY,
                "max_poll_interval_ms": 300_000,
                "assignment": "range",
            }
        },
    )
    workload = Workload.from_arrays(duration, agent=([1.0] * FIFTY, [step_s] * FIFTY))
    return run_arrays(d, workload)


def test_fifty_steps_of_two_seconds_fit_the_poll_interval() -> None:
    sim, result = fifty_records(2.0, "none")
    m = result.metrics
    assert (m.rebalances, m.redelivered, m.duplicate_effects) == (0, 0, 0)
    assert m.processed == FIFTY
    assert sim.layer(SlowBatches).kicks["agent"].kicks == 0
    agent = m.by_group["agent"]
    assert agent.poll_records_max == FIFTY  # one poll fetched them all
    assert agent.poll_batch_max_s == 100.0  # fetched at 1 s, 50 steps of 2 s back to back


def test_fifty_steps_of_seven_seconds_get_the_consumer_kicked_and_the_batch_redelivered() -> None:
    """350 s > 300 s: the member is kicked (the watchdog notices within a tenth of the interval
    after 300 s), its commit fails and the batch comes back; each pass is as slow as the first, so
    without dedupe the storm never ends."""
    sim, result = fifty_records(7.0, "none")
    m = result.metrics
    kicks = sim.layer(SlowBatches).kicks["agent"].kicks
    assert kicks >= 2400 // 350
    assert m.rebalances == 2 * kicks  # each kick: a leave and a rejoin
    assert m.redelivered == FIFTY * kicks
    assert m.duplicate_effects >= (300 // 7) * (kicks - 1)
    assert result.timeseries.lag_total[-1] == FIFTY  # the committed offset never moved
    assert m.lag_total_max == FIFTY


def test_durable_dedupe_lets_the_redelivered_batch_through() -> None:
    """Kicked once, between 300 s and 330 s; the records done by then are skipped on the second
    pass, the rest are applied, and the batch commits."""
    sim, result = fifty_records(7.0, "durable_same_transaction")
    m = result.metrics
    assert sim.layer(SlowBatches).kicks["agent"].kicks == 1
    assert m.rebalances == 2
    assert m.redelivered == FIFTY
    assert 300 // 7 <= m.dedupe_skipped <= 330 // 7
    assert (m.duplicate_effects, m.lost) == (0, 0)
    assert m.processed == FIFTY
    assert result.timeseries.lag_total[-1] == 0
    # The longest batch is the kicked one, cut short by the kick (the second skips what the first
    # applied, all in one go, and works the rest: 7 s a record).
    assert 300 < m.by_group["agent"].poll_batch_max_s <= 330
    assert m.by_group["agent"].poll_records_max == FIFTY


def test_big_poll_batches_after_a_long_crash_cause_a_rebalance_storm() -> None:
    """Every agent worker down 600 s at the peak leaves about 190 events per partition. Instances
    owning two partitions with max.poll.records 500 fetch up to 250 records a partition: about
    380 s of 2 s steps, over the 300 s interval, so members are kicked again and again. With the
    reference's 20-record polls the restart is the only rebalance. The load is open loop here
    (each run's steps arrive on schedule), the backlog a causal run cannot build: its runs pause
    behind their first unapplied step."""
    s = course_scenario(
        "worker-crash",
        faults=[
            {"kind": "worker_crash", "at_seconds": 240, "duration_seconds": 600, "instances": "all"}
        ],
        duration_seconds=1500,
        load={"run_model": "open_loop"},
    )
    small = {"instances": 16, "concurrency_per_instance": 2, "max_poll_records": 20}
    big = {**small, "max_poll_records": 500}
    calm = simulate(reference(consumers={"agent": small}), s).metrics
    storm = simulate(reference(consumers={"agent": big}), s).metrics
    assert calm.rebalances == 1
    assert storm.rebalances >= 5
    assert storm.redelivered > 5 * calm.redelivered
    assert (storm.lost, storm.duplicate_effects) == (0, 0)  # durable dedupe absorbs the storm


def test_a_rebalance_fault_pauses_an_eager_group_and_not_a_sticky_one() -> None:
    """A rebalance at 100 s with the same members: range revokes every partition for 20 s,
    cooperative sticky moves none."""
    n = 600
    workload = Workload.from_arrays(300.0, agent=([i * 0.5 for i in range(n)], [1.0] * n))
    fault = [{"kind": "rebalance", "at_seconds": 100, "pause_seconds": 20}]
    lags = {}
    for strategy in ("range", "cooperative_sticky"):
        d = design(consumers={"agent": {"assignment": strategy}})
        result = run_arrays(d, workload, fault)[1]
        assert result.metrics.rebalances >= 1
        assert [(w.kind, w.start_s, w.end_s) for w in result.fault_windows] == [
            ("rebalance", 100.0, 120.0)
        ]
        lags[strategy] = result.metrics.lag_total_max
    assert lags["range"] >= 2 * 20 * 0.8  # 2 events/s wait about 20 s
    assert lags["cooperative_sticky"] <= 10
