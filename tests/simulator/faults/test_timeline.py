"""Every fault run returns its timeline (issue item 10): lag, throughput and errors over time, and
the fault windows for shading; the same inputs give the same bytes."""

from __future__ import annotations

import pytest

from simulator import simulate
from simulator.design import Design
from simulator.result import SimulationResult
from simulator.scenario import (
    ConsumerPause,
    Flaky,
    Poison,
    Rebalance,
    RollingRestart,
    SagaFailure,
    Scenario,
    StateFailover,
)
from tests.simulator.faults.builders import STEPS, course_scenario, known_bad, reference

SCENARIOS = sorted(p.stem for p in (STEPS / "scenarios").glob("*.yaml"))


def expected_windows(design: Design, scenario: Scenario) -> list[tuple[str, float, float]]:
    """The window each injected fault should report (poison stalls and sagas have their own;
    flaky events none: their retries last about a second)."""
    out: list[tuple[str, float, float]] = []
    for f in scenario.faults:
        if isinstance(f, StateFailover):
            out.append((f.kind, f.at_seconds, f.at_seconds + design.state_store.failover_seconds))
        elif isinstance(f, Rebalance):
            out.append((f.kind, f.at_seconds, f.at_seconds + f.pause_seconds))
        elif isinstance(f, RollingRestart):
            instances = getattr(design.consumers, f.group).instances
            last = f.at_seconds + (instances - 1) * f.interval_seconds + f.down_seconds
            out.append((f.kind, f.at_seconds, last))
        elif isinstance(f, ConsumerPause):
            end = f.at_seconds + f.duration_seconds
            expired = f.duration_seconds > f.offsets_retention_hours * 3600
            if expired and design.event_log.auto_offset_reset == "none":
                end += f.operator_response_seconds
            out.append((f.kind, f.at_seconds, end))
        elif not isinstance(f, Poison | Flaky | SagaFailure):
            out.append((f.kind, f.at_seconds, f.at_seconds + f.duration_seconds))
    return sorted(out)


def in_window(result: SimulationResult, start: float, end: float) -> tuple[list[int], list[float]]:
    ts = result.timeseries
    rows = [i for i, t in enumerate(ts.t_s) if start < t <= end]
    return [ts.errors[i] for i in rows], [ts.lag_total[i] for i in rows]


@pytest.mark.parametrize("name", SCENARIOS)
def test_fault_windows_and_series(name: str) -> None:
    """Every course scenario: one window per injected fault, at the times it names."""
    d, s = reference(), course_scenario(name)
    result = simulate(d, s)
    windows = sorted(
        (w.kind, w.start_s, w.end_s) for w in result.fault_windows if w.kind != "poison"
    )
    assert windows == expected_windows(d, s)
    ts = result.timeseries
    n = len(ts.t_s)
    assert n == 300
    for series in (ts.lag_total, ts.lag_worst_partition, ts.arrivals_eps, ts.throughput_eps):
        assert len(series) == n
    assert len(ts.in_flight) == len(ts.errors) == n
    assert not any("not simulated" in note for note in result.notes)


def test_errors_show_while_the_provider_or_the_store_is_down() -> None:
    outage = simulate(known_bad("no-fallback"), course_scenario("provider-outage"))
    # Two agent workers crash 2 s before the outage and are back 30 s later, inside it.
    windows = {w.kind: w for w in outage.fault_windows}
    assert sorted(windows) == ["provider_outage", "worker_crash"]
    crash, window = windows["worker_crash"], windows["provider_outage"]
    assert crash.start_s < window.start_s < crash.end_s < window.end_s
    before, _ = in_window(outage, 0, crash.start_s)
    assert sum(before) == 0
    errors, lag = in_window(outage, window.start_s, window.end_s)
    assert sum(errors) > 0
    # Causal runs pause during the outage: the lag grows by the runs requested meanwhile (one
    # planner call each, 0.5 runs/s), not by every call they would have made.
    assert max(lag) > 0.8 * 0.5 * (window.end_s - window.start_s)
    failover = simulate(reference(), course_scenario("state-failover"))
    [window] = failover.fault_windows
    errors, _ = in_window(failover, window.start_s, window.end_s)
    assert sum(errors) > 0
    before, _ = in_window(failover, 0, window.start_s)
    assert sum(before) == 0


def test_poison_stalls_are_windows() -> None:
    result = simulate(reference(), course_scenario("poison"))
    stalls = [w for w in result.fault_windows if w.kind == "poison"]
    assert stalls
    assert all(0 < w.end_s - w.start_s <= 31 for w in stalls)  # at most 1+2+4+8+16 s of waits


def test_the_same_inputs_give_the_same_bytes() -> None:
    s = course_scenario(
        "peak",
        faults=[
            {"kind": "worker_crash", "at_seconds": 100, "duration_seconds": 30, "instances": 1},
            {"kind": "provider_outage", "at_seconds": 200, "duration_seconds": 60},
            {"kind": "state_failover", "at_seconds": 300},
            {"kind": "poison", "rate": 0.002},
            {"kind": "broker_loss", "at_seconds": 400, "duration_seconds": 30},
            {"kind": "saga_failure", "step_success": 0.9},
        ],
    )
    first = simulate(known_bad("no-dedupe"), s).model_dump_json()
    assert simulate(known_bad("no-dedupe"), s).model_dump_json() == first
