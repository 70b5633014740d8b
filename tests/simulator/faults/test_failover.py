"""State-store failover (issue item 4): writes down for the failover time, retried without being
dead-lettered; asynchronous replication loses the last lag window, rebuilt from the log or lost."""

from __future__ import annotations

from typing import Any

import pytest

from simulator import simulate
from simulator.engine import Workload
from simulator.result import SimulationResult
from tests.simulator.faults.builders import (
    course_scenario,
    design,
    known_bad,
    reference,
    run_arrays,
)

RATE = 100  # state writes per second, evenly spaced
WRITES = Workload.from_arrays(
    400.0, state=([i / RATE for i in range(RATE * 400)], [0.01] * (RATE * 400))
)


def failover(**store: Any) -> SimulationResult:
    """100 writes/s of 10 ms; the primary is lost at 100 s."""
    d = design(
        consumers={"state": {"instances": 2, "concurrency_per_instance": 8}},
        state_store={"replicas": 1, "write_latency_ms": 10, **store},
        failures={
            "retry": {"max_attempts": 2, "base_backoff_seconds": 0.5, "max_backoff_seconds": 2}
        },
    )
    return run_arrays(d, WRITES, [{"kind": "state_failover", "at_seconds": 100}])[1]


def test_synchronous_replication_loses_nothing() -> None:
    m = failover(replication="sync", failover="automatic", failover_seconds=35).metrics
    assert (m.state_writes_lost, m.state_writes_rebuilt, m.lost, m.dead_lettered) == (0, 0, 0, 0)


def test_asynchronous_replication_loses_the_last_lag_window() -> None:
    """1000 ms of replication lag at 100 writes/s: the 100 writes acknowledged in [99, 100) s."""
    m = failover(replication="async", replication_lag_ms=1000, failover_seconds=35).metrics
    assert m.state_writes_lost == pytest.approx(RATE, abs=1)
    assert m.state_writes_rebuilt == 0
    assert m.lost == 0  # applied effects missing from the store, not events never processed


def test_state_rebuildable_from_the_log_rebuilds_them() -> None:
    """A rebuild replays the changes from the event log, so the log must hold every change
    (append-only): the 25 writes of the 250 ms lag window are rebuilt; a projection over a log
    updated in place cannot bring them back, and they are lost."""
    store = {"replicas": 1, "replication": "async", "replication_lag_ms": 250}
    faults = [{"kind": "state_failover", "at_seconds": 100}]
    d = design(
        data_model={"state_rebuildable_from_log": True, "append_only_event_log": True},
        state_store=store,
    )
    m = run_arrays(d, WRITES, faults)[1].metrics
    assert m.state_writes_rebuilt == pytest.approx(RATE / 4, abs=1)
    assert m.state_writes_lost == 0
    in_place = design(
        data_model={"state_rebuildable_from_log": True, "append_only_event_log": False},
        state_store=store,
    )
    m = run_arrays(in_place, WRITES, faults)[1].metrics
    assert m.state_writes_lost == pytest.approx(RATE / 4, abs=1)
    assert m.state_writes_rebuilt == 0


def test_writers_retry_through_the_failover_then_drain() -> None:
    """35 s down: the writers keep retrying (the retry limit of 2 does not dead-letter an
    unavailable store), commit nothing past the failed write, lag grows to about 3,500 writes and
    drains in seconds once the new primary answers (capacity 1,000 writes/s)."""
    result = failover(replication="sync", failover="automatic", failover_seconds=35)
    m = result.metrics
    assert (m.lost, m.dead_lettered) == (0, 0)
    assert m.processed == RATE * 400
    assert m.backlog_peak == pytest.approx(RATE * 35, rel=0.05)
    assert m.drain_seconds is not None and m.drain_seconds < 10
    [window] = result.fault_windows
    assert (window.kind, window.start_s, window.end_s) == ("state_failover", 100.0, 135.0)
    during = [
        e
        for t, e in zip(result.timeseries.t_s, result.timeseries.errors, strict=True)
        if 100 < t <= 135
    ]
    assert sum(during) > 0
    after = [
        e for t, e in zip(result.timeseries.t_s, result.timeseries.errors, strict=True) if t > 140
    ]
    assert sum(after) == 0


def test_no_replica_keeps_writes_down_for_the_rest_of_the_window() -> None:
    m = failover(replicas=0).metrics
    assert m.drain_seconds is None
    assert m.lost == 0


def test_course_state_failover() -> None:
    """The reference (automatic, 35 s, async, rebuildable) recovers; without rebuild the lag
    window is lost; a failover by hand keeps writes down 300 s (someone is paged first, whatever
    the time to promote says) and drains far later."""
    s = course_scenario("state-failover")
    ref = simulate(reference(), s).metrics
    assert (ref.state_writes_lost, ref.lost) == (0, 0)
    assert ref.state_writes_rebuilt > 0
    assert ref.drain_seconds is not None and ref.drain_seconds <= 60
    lossy = simulate(known_bad("async-no-rebuild"), s).metrics
    assert lossy.state_writes_lost == ref.state_writes_rebuilt
    assert lossy.lost == 0
    manual = simulate(known_bad("manual-failover"), s).metrics
    assert manual.state_writes_refused_s is not None
    assert 290 <= manual.state_writes_refused_s <= 300
    assert manual.drain_seconds is not None and manual.drain_seconds > 3 * ref.drain_seconds
    assert manual.lost == 0
