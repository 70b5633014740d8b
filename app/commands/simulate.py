"""``designlab simulate DESIGN --scenario NAME|FILE [--seed N] [--json] [--steps-dir D]
[--max-step-events N] [--timeout-seconds S]``.

Contract 4. ``--scenario`` is a scenario file (YAML) or the name of one of the course's scenarios
(``steps/scenarios/<name>.yaml``: peak, worker-crash, state-failover, provider-outage, poison).
When the course folder loads, the result carries the monthly cost against the course budget, as
``POST /api/v1/simulate`` does (``app.grading.grader.run_scenario``); a scenario file outside a
loadable course is simulated without a cost. ``--json`` prints the SimulationResult JSON
(byte-identical for the same design, scenario, seed and simulator version); otherwise a summary.
The server's budgets hold (app.commands.budget): a simulation expected to be too large is refused
before any work, one that runs too long is stopped, each naming the field that makes it so.
Exit codes: 0 simulated; 2 bad input (a design or scenario file that is not valid, an unknown
scenario name, a simulation over the budgets because of the design or of the scenario file
given); 3 internal error, or a course scenario stopped on a busy machine with nothing in the
design to blame.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from app.commands.budget import MaxStepEvents, TimeoutSeconds, budgeted
from app.errors import NotFound
from app.grading.grader import CourseMaterial, CourseNotGradable, load_material, run_scenario
from app.settings import get_settings
from simulator.files import load_design, load_scenario
from simulator.result import Metrics, SimulationResult
from simulator.scenario import Scenario


def _course(steps_dir: Path) -> CourseMaterial | None:
    """The course material, or None when the folder has no loadable course."""
    if not (steps_dir / "course.yaml").is_file():
        return None
    try:
        return load_material(steps_dir)
    except CourseNotGradable:
        return None


def _scenario(name_or_file: str, material: CourseMaterial | None) -> Scenario:
    path = Path(name_or_file)
    if path.suffix in (".yaml", ".yml") or path.is_file():
        return load_scenario(path)
    scenarios = material.loaded.scenarios if material is not None else {}
    if name_or_file not in scenarios:
        names = ", ".join(sorted(scenarios)) or "none (no course folder loaded)"
        raise NotFound(f"no scenario {name_or_file!r}; choose a file or one of: {names}")
    return scenarios[name_or_file]


def _number(x: float | None, unit: str = "", digits: int = 1) -> str:
    if x is None:
        return "never"
    return f"{x:,.{digits}f}{unit}"


def _capacity(capacity_eps: float, utilisation: float) -> str:
    """ "12.0/s, utilisation 43.2%", or "0/s: no capacity" (nothing can process the load)."""
    if capacity_eps <= 0:
        return "0/s: no capacity"
    return f"{capacity_eps:,.1f}/s, utilisation {utilisation:.1%}"


def _latency_line(m: Metrics) -> str:
    """The latency percentiles, "no event processed" when none finished, and how many events
    still waited at the end (the percentiles count their wait so far: lower bounds)."""
    if m.processed == 0:
        line = "latency: no event processed"
    else:
        line = (
            f"latency p50 {m.latency_p50_s:,.2f} s, p95 {m.latency_p95_s:,.2f} s, "
            f"p99 {m.latency_p99_s:,.2f} s"
        )
    if m.latency_censored:
        line += (
            f" ({m.latency_censored:,} events still waiting at the end, counted with their "
            "wait so far: lower bounds)"
        )
    return line


def _run_lines(m: Metrics) -> list[str]:
    """Causal runs only: the runs finished and unfinished, the run latency against the critical
    path, and the events applied out of their task's or run's order."""
    if m.runs_completed is None:
        return []
    lines = [f"runs: {m.runs_completed:,} reported, {m.runs_stalled or 0:,} unfinished at the end"]
    if m.run_latency_p50_s is not None and m.runs_completed:
        lines.append(
            f"run latency p50 {m.run_latency_p50_s:,.1f} s, p95 {m.run_latency_p95_s or 0:,.1f} s, "
            f"p99 {m.run_latency_p99_s or 0:,.1f} s (critical path "
            f"{m.run_critical_path_s or 0:,.1f} s if nothing queued)"
        )
    lines.append(
        f"applied out of order: {m.order_violations_task or 0:,} within a task, "
        f"{m.order_violations_run or 0:,} within a run"
    )
    return lines


def summary(result: SimulationResult) -> str:
    """Lines a person reads: load, capacity, backlog and recovery, durability, tokens, cost.

    Honest at the edges: a group with no capacity says so (not a percentage of nothing), nothing
    processed reads "no event processed" (not 0.00 s), latencies with events still waiting at
    the end are marked as lower bounds, and a fault still on at the end is named by the note.
    """
    m = result.metrics
    busiest = max(m.by_group, key=lambda n: m.by_group[n].utilisation, default=None)
    lines = [
        f"{result.scenario} (seed {result.seed}, {result.duration_seconds:g} s simulated, "
        f"simulator {result.simulator_version})",
        f"step events: {m.arrivals:,} arrived, {m.processed:,} processed, "
        f"{m.throughput_eps:,.1f}/s",
        (f"busiest group {busiest}: " if busiest else "")
        + f"capacity {_capacity(m.capacity_eps, m.utilisation)}, "
        f"in flight {m.in_flight_mean:,.1f} on average (all groups)",
        _latency_line(m),
        *_run_lines(m),
        f"lag peak {m.lag_total_max:,}, backlog peak {m.backlog_peak:,}"
        + (
            f", backlog at restart {m.backlog_at_restart:,}"
            if m.backlog_at_restart is not None
            else ""
        )
        + f", drain {_number(m.drain_seconds, ' s')}"
        + (f" ({m.drain_note})" if m.drain_note else ""),
        f"redelivered {m.redelivered:,}, duplicate effects {m.duplicate_effects:,}, "
        f"lost {m.lost:,}, dead-lettered {m.dead_lettered:,}, rebalances {m.rebalances:,}",
        f"model calls {m.model_calls:,} ({m.model_calls_repeated:,} repeated), tokens "
        f"{m.tokens:,} ({m.tokens_repeated:,} repeated), HTTP 429s {m.http_429s:,}",
    ]
    for name, g in m.by_group.items():
        p95 = (
            "no event processed"
            if g.processed == 0
            else ("p95 at least " if g.latency_censored else "p95 ") + f"{g.latency_p95_s:,.2f} s"
        )
        lines.append(
            f"  {name}: {g.arrivals:,} arrived, capacity "
            f"{_capacity(g.capacity_eps, g.utilisation)}, lag peak {g.lag_total_max:,}, {p95}"
        )
    if result.cost is not None:
        c = result.cost
        lines.append(f"monthly cost ${c.monthly_usd:,.0f} against a budget of ${c.budget_usd:,.0f}")
    lines.extend(f"note: {note}" for note in result.notes)
    return "\n".join(lines)


def simulate_command(
    design: Annotated[
        Path, typer.Argument(help="The design file (YAML, version: 1, which may be left out).")
    ],
    scenario: Annotated[
        str, typer.Option(help="A scenario file, or the name of one of the course's scenarios.")
    ],
    seed: Annotated[
        int | None,
        typer.Option(help="Seed; default: the scenario's own seed.", min=0, max=2**63 - 1),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the result as JSON (contract 3's metrics).")
    ] = False,
    steps_dir: Annotated[
        Path | None, typer.Option(help="The course folder; default STEPS_DIR (steps/).")
    ] = None,
    max_step_events: MaxStepEvents = None,
    timeout_seconds: TimeoutSeconds = None,
) -> None:
    """Simulate a design under a scenario and print its metrics (or the JSON result)."""
    material = _course(steps_dir or get_settings().steps_dir)
    loaded_design = load_design(design)
    chosen = _scenario(scenario, material)
    course_scenarios = material.loaded.scenarios if material is not None else {}
    simulate = budgeted(
        max_step_events, timeout_seconds, scenario_is_input=scenario not in course_scenarios
    )
    run_seed = chosen.seed if seed is None else seed
    if material is not None:
        result = run_scenario(loaded_design, chosen, run_seed, material, simulate)
    else:
        result = simulate(loaded_design, chosen, run_seed)
    typer.echo(result.model_dump_json() if as_json else summary(result))
