"""The data plane takes its own samples: results do not depend on how often it is advanced."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest
import simpy

from simulator.engine.run import Simulation
from simulator.files import load_design, load_scenario
from simulator.simulation import simulate

STEPS = Path(__file__).resolve().parents[2] / "steps"


def _simulate(design: str, scenario: str, every_s: float | None, monkeypatch: Any) -> str:
    """Result JSON of a course design under a course scenario; with ``every_s``, an extra SimPy
    process advances every group every ``every_s`` seconds (as a busy control plane would)."""
    original = Simulation.start

    def start(sim: Simulation) -> None:
        if every_s is not None:
            env = sim.env

            def ticker() -> Generator[simpy.Event, Any, None]:
                k = 1
                while k * every_s <= sim.duration:
                    yield env.timeout(k * every_s - env.now)
                    sim.advance(k * every_s)
                    k += 1

            env.process(ticker())
        original(sim)

    monkeypatch.setattr(Simulation, "start", start)
    d = load_design(STEPS / "designs" / design)
    s = load_scenario(STEPS / "scenarios" / scenario)
    return simulate(d, s, s.seed).model_dump_json()


@pytest.mark.parametrize(
    ("design", "scenario"),
    [
        # Slow batches: kicks asked for by the data plane run at the next sample time.
        ("bad/big-poll-batch.yaml", "instance-crash.yaml"),
        # Retries through a provider outage without a fallback; watchdog kicks.
        ("bad/no-fallback.yaml", "provider-outage.yaml"),
        ("reference.yaml", "peak.yaml"),
    ],
)
def test_result_does_not_depend_on_how_often_groups_are_advanced(
    design: str, scenario: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    alone = _simulate(design, scenario, None, monkeypatch)
    assert _simulate(design, scenario, 0.1, monkeypatch) == alone
    assert _simulate(design, scenario, 7.0, monkeypatch) == alone


def test_a_sample_at_a_crash_instant_sees_the_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    """Right-continuous samples: the chart point at the crash time already counts the crashed
    instances' steps as gone from flight (every agent instance crashes at 240 s)."""
    d = load_design(STEPS / "designs" / "reference.yaml")
    s = load_scenario(STEPS / "scenarios" / "worker-crash.yaml")
    # The course's crash waits for each member's next effect (after_effect); here every instance
    # must die at the crash instant itself.
    crash = s.faults[0].model_copy(update={"after_effect": False})
    assert crash.kind == "worker_crash"
    s = s.model_copy(update={"faults": [crash]})
    result = simulate(d, s, s.seed)
    t_s = result.timeseries.t_s
    at = [i for i, t in enumerate(t_s) if abs(t - crash.at_seconds) < 1e-6]
    assert at, f"no chart point at {crash.at_seconds} s: {t_s[:5]}..."
    before = result.timeseries.in_flight[at[0] - 1]
    assert result.timeseries.in_flight[at[0]] < before


def test_a_control_action_runs_at_the_next_sample_time_and_never_past_the_last() -> None:
    from simulator.engine import Workload
    from tests.simulator.test_consumers import even, make_design, simulation

    sim = simulation(make_design(), Workload.from_arrays(300.0, agent=even(2, 300, 0.5)))
    group = sim.engine.groups["agent"]
    ran: list[float] = []
    # Samples every 300 / 2400 = 0.125 s: a request at 10.01 s runs at 10.125 s.
    assert group.request_control(10.01, ran.append) == pytest.approx(10.125)
    assert group.request_control(500.0, ran.append) == float("inf")
    group.advance(20.0)
    assert ran == [pytest.approx(10.125)]


def test_a_released_group_keeps_no_partition_through_its_samples() -> None:
    """Back-to-back runs stay within one run's memory: once released, neither the group nor its
    samples hold the per-event partitions."""
    from simulator.engine import Workload
    from tests.simulator.test_consumers import even, make_design, simulation

    sim = simulation(make_design(), Workload.from_arrays(60.0, agent=even(2, 60, 0.5)))
    sim.run()
    group = sim.engine.groups["agent"]
    samples = group.samples
    assert samples is not None and len(samples.parts) == 8
    group.release()
    assert (group.parts, len(samples.parts), samples.early_f) == ([], 0, [])
