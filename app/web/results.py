"""What the results block of a step shows after a run: checks (failed first), the four durability
figures of a fault scenario, the charts and the architecture annotated with the run's figures."""

from __future__ import annotations

from dataclasses import dataclass

from app.grading.result import CheckResult, StepResult
from app.step_runs import Runs
from app.web.backlog import shown_drain
from app.web.charts import Chart, fault_name, simulation_charts
from app.web.losses import Losses, losses
from simulator.result import SimulationResult


@dataclass(frozen=True)
class FaultFigures:
    """The four figures a fault step is about, in the units the learner reads them."""

    faults: tuple[str, ...]
    losses: Losses
    """Every kind of loss the run reports (events, unpublished next events, state writes)."""
    duplicate_effects: int
    tokens_repeated: int
    drain_seconds: float | None
    drain_note: str | None
    backlog_at_restart: int | None = None
    """Events behind when crashed workers came back (None: no crash, or they never came back)."""
    backlog_peak: int = 0
    """Work due and not started above normal, all groups (steps a stalled run owes included)."""
    lag_total_max: int = 0
    """The log's lag at its peak (events in the log only), beside ``backlog_peak``."""
    redelivered: int = 0
    """Records consumed again after the fault (a crash, a rebalance, a reset offset)."""
    reprocessing_rate: float = 0.0
    """``redelivered`` over every record consumed, 0..1: beside a lag back to zero, work done
    again (dedupe discards it, or it is applied twice)."""


@dataclass(frozen=True)
class StepResults:
    """A graded run of one step as the page shows it."""

    step: StepResult
    simulation: SimulationResult | None
    checks: tuple[CheckResult, ...]
    """Failed, not exercised and error checks first, then passed ones; declared order within
    each."""
    fault: FaultFigures | None
    charts: tuple[Chart, ...]

    @property
    def not_passed(self) -> int:
        """Checks that failed or could not run."""
        return sum(1 for c in self.step.checks if c.status != "pass")

    @property
    def passed(self) -> bool:
        """True when every check passed."""
        return self.step.status == "pass"


_FAILED_FIRST = {"fail": 0, "not_exercised": 1, "error": 2}
"""Order of the check statuses on the page (passed ones last)."""


def failed_first(checks: list[CheckResult]) -> tuple[CheckResult, ...]:
    """Checks that failed, were not exercised or could not run, then those that passed, each
    group in declared order."""
    return tuple(sorted(checks, key=lambda c: _FAILED_FIRST.get(c.status, len(_FAILED_FIRST))))


def fault_figures(simulation: SimulationResult) -> FaultFigures | None:
    """Lost (every kind), duplicated, repaid and drain figures of a run with faults; None
    without faults."""
    if not simulation.fault_windows:
        return None
    kinds = tuple(dict.fromkeys(fault_name(w.kind) for w in simulation.fault_windows))
    m = simulation.metrics
    drain_seconds, drain_note = shown_drain(simulation)
    return FaultFigures(
        kinds,
        losses(m),
        m.duplicate_effects,
        m.tokens_repeated,
        drain_seconds,
        drain_note,
        m.backlog_at_restart,
        m.backlog_peak,
        m.lag_total_max,
        m.redelivered,
        m.reprocessing_rate,
    )


def step_results(step: StepResult, runs: Runs) -> StepResults:
    """The view of ``step`` (one step of a grade) with the simulation of its scenario."""
    simulation = runs.of_step(step.id, step.scenario)
    return StepResults(
        step=step,
        simulation=simulation,
        checks=failed_first(step.checks),
        fault=fault_figures(simulation) if simulation else None,
        charts=tuple(simulation_charts(simulation, step.cost)) if simulation else (),
    )
