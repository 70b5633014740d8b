"""Grade a design against the course: every step's checks over its scenario's simulation.

Each scenario a step (or a check) names is simulated once per design and seed within a grade and
priced with the course's catalog and budget. Checks run in declared order; an expression or
explanation that fails makes its check ``error`` rather than stopping the grade.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import simulator
from app.checks.explanations import ExplanationError, render_explanation
from app.checks.expressions import ExpressionError, evaluate, names_used
from app.checks.kinds import CheckKind, check_kind
from app.course.content import LoadedCourse, LoadedStep
from app.course.loader import load_course
from app.course.models import Check, Course
from app.course.step_design import course_design, step_design, undecided_differences
from app.errors import BadInput, Unavailable
from app.grading.result import (
    CheckResult,
    CheckStatus,
    GradeResult,
    InputProblem,
    Status,
    StepResult,
)
from simulator import SIMULATOR_VERSION
from simulator.cost import monthly_cost
from simulator.design import Design
from simulator.errors import FieldError, InputFileError
from simulator.estimate import Estimate, estimate
from simulator.pricing import Pricing, load_pricing
from simulator.result import Cost, Metrics, SimulationResult
from simulator.scenario import Scenario

Simulate = Callable[[Design, Scenario, int], SimulationResult]
"""``simulator.simulate(design, scenario, seed)`` or anything with its signature and result."""


class CourseNotGradable(Exception):
    """The course folder cannot grade anything (course.yaml or the pricing catalog is broken)."""

    def __init__(self, problems: list[InputProblem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


@dataclass(frozen=True)
class CourseMaterial:
    """What grading needs from the course folder: the loaded course and its pricing catalog."""

    loaded: LoadedCourse
    pricing: Pricing

    @property
    def course(self) -> Course:
        """The course; a CourseMaterial only exists for a course whose course.yaml loaded."""
        assert self.loaded.course is not None
        return self.loaded.course


def load_material(steps_dir: Path) -> CourseMaterial:
    """Load the course folder and its pricing catalog.

    Raises CourseNotGradable when course.yaml or the catalog cannot be loaded; a broken step does
    not raise (its checks grade as ``error``).
    """
    loaded = load_course(steps_dir)
    if loaded.course is None:
        problems = [
            InputProblem(file=p.file, line=p.line, field=p.field, message=p.message)
            for p in loaded.errors
        ]
        raise CourseNotGradable(problems)
    try:
        pricing = load_pricing(steps_dir / loaded.course.pricing)
    except InputFileError as exc:
        raise CourseNotGradable([InputProblem.from_field_error(e) for e in exc.errors]) from exc
    return CourseMaterial(loaded, pricing)


def run_scenario(
    design: Design,
    scenario: Scenario,
    seed: int,
    material: CourseMaterial,
    simulate: Simulate | None = None,
) -> SimulationResult:
    """Simulate ``scenario`` for ``design`` with ``seed`` and price it against the course budget.

    The result's ``cost`` is ``simulator.cost.monthly_cost`` with the run's metrics; the same
    function serves ``designlab grade`` and ``POST /api/v1/simulate``, so both give one JSON.
    """
    result = (simulate or simulator.simulate)(design, scenario, seed)
    cost = monthly_cost(
        design,
        scenario,
        material.pricing,
        budget_usd=material.course.budget_usd,
        metrics=result.metrics,
    )
    return result.model_copy(update={"cost": cost})


@dataclass
class _Run:
    """One scenario's figures for the checks that read it (or why they are missing)."""

    scenario: Scenario
    seed: int
    result: SimulationResult | None = None
    failure: str | None = None
    problems: list[InputProblem] = field(default_factory=list)
    """What the design must change when the simulation was refused (its fields named)."""
    estimate: Estimate | None = None

    @property
    def metrics(self) -> Metrics | None:
        return self.result.metrics if self.result else None

    @property
    def cost(self) -> Cost | None:
        return self.result.cost if self.result else None


@dataclass
class _Grading:
    design: Design
    material: CourseMaterial
    seed: int | None
    simulate: Simulate | None
    runs: dict[tuple[str, str], _Run] = field(default_factory=dict)
    """Keyed by (the step design's SHA-256, scenario name)."""

    def design_for(self, loaded: LoadedStep) -> Design:
        """The design ``loaded`` judges: the learner's decisions up to it, the course's neutral
        values for the rest (app.course.step_design)."""
        return step_design(self.material.loaded, loaded, self.design)

    def run(self, name: str, design: Design) -> _Run:
        """The scenario's run for ``design``, simulated on first use and reused after (cached
        within a grade: steps whose designs agree share it)."""
        key = (design_sha256(design), name)
        if key in self.runs:
            return self.runs[key]
        scenario = self.material.loaded.scenarios[name]
        seed = scenario.seed if self.seed is None else self.seed
        run = _Run(scenario, seed)
        try:
            run.estimate = estimate(design, scenario)
            run.result = run_scenario(design, scenario, seed, self.material, self.simulate)
        except Unavailable:  # not a verdict on the design: the whole grade could not run
            raise
        except BadInput as exc:  # refused for the design's (or scenario's) own fields
            run.failure = f"simulating {name} was refused: {exc.detail}"
            run.problems = [InputProblem.from_field_error(f) for f in exc.fields]
        except Exception as exc:  # reported on the checks that need it, never raised
            run.failure = f"simulating {name} failed: {type(exc).__name__}: {exc}"
        self.runs[key] = run
        return run

    def names(
        self, scenario_name: str | None, design: Design, baseline: _Run | None = None
    ) -> dict[str, Any]:
        """The names a check sees (app.checks.names) for a scenario, or for none; ``baseline``:
        the same scenario's run for the design an earlier step judges (``baseline_cost``)."""
        run = self.run(scenario_name, design) if scenario_name else None
        return {
            "design": design,
            "scenario": run.scenario if run else None,
            "metrics": run.metrics if run else None,
            "cost": run.cost if run else None,
            "estimate": run.estimate if run else None,
            "budget_usd": self.material.course.budget_usd,
            "baseline_cost": baseline.cost if baseline else None,
        }

    def baseline(self, check: Check, scenario_name: str | None) -> _Run | None:
        """The run of ``scenario_name`` for the design step ``check.baseline_step`` judges (the
        decisions after it at the course's neutral values), or None without one."""
        earlier = baseline_step(self.material, check)
        if earlier is None or scenario_name is None:
            return None
        return self.run(scenario_name, self.design_for(earlier))


def baseline_step(material: CourseMaterial, check: Check) -> LoadedStep | None:
    """The earlier step ``check.baseline_step`` names, or None (none named, or no such step:
    lint reports it)."""
    if check.baseline_step is None:
        return None
    return next((s for s in material.loaded.steps if s.number == check.baseline_step), None)


def _kind(check: Check) -> CheckKind:
    try:
        return check_kind(check.expr)
    except SyntaxError:
        return "design_review"


def _check_result(
    check: Check, status: CheckStatus, message: str, explanation: str, hint: str | None = None
) -> CheckResult:
    """The result of ``check``; ``hint`` is its rendered hint (default: the hint as written when
    it is plain text, none when it is a template that could not be rendered over a run)."""
    if hint is None:
        hint = "" if "{" in check.hint else check.hint
    return CheckResult(
        id=check.id,
        title=check.title,
        kind=_kind(check),
        status=status,
        points=check.points if status == "pass" else 0,
        max_points=check.points,
        message=message,
        explanation=explanation,
        hint=hint,
        concept=check.concept,
    )


def _other_scenario(check: Check, step_scenario: str | None) -> str | None:
    """The scenario ``check`` judges when it is not its step's own, else None."""
    return check.scenario if check.scenario and check.scenario != step_scenario else None


def _grade_check(
    grading: _Grading, check: Check, step_scenario: str | None, design: Design
) -> CheckResult:
    scenario_name = check.scenario or step_scenario
    if scenario_name and scenario_name not in grading.material.loaded.scenarios:
        return _check_result(check, "error", f"scenario {scenario_name!r} is not in the course", "")
    baseline = grading.baseline(check, scenario_name)
    names = grading.names(scenario_name, design, baseline)
    run = grading.run(scenario_name, design) if scenario_name else None
    if baseline and baseline.failure and not (run and run.failure):
        return _check_result(check, "error", baseline.failure, "")
    if run and run.failure:
        try:
            needs_run = bool(names_used(check.expr) & {"metrics", "cost"})
        except SyntaxError:
            needs_run = True
        if needs_run:
            return _check_result(check, "error", run.failure, "")
    try:
        exercised = check.needs is None or bool(evaluate(check.needs.expr, names))
    except ExpressionError as exc:
        message = f"what the check needs could not be evaluated: {exc}"
        return _check_result(check, "error", message, "")
    try:
        passed = exercised and bool(evaluate(check.expr, names))
    except ExpressionError as exc:
        return _check_result(check, "error", f"the check could not be evaluated: {exc}", "")
    try:
        explanation = render_explanation(check.explain, names)
    except ExplanationError as exc:
        message = f"the explanation could not be rendered: {exc}"
        return _check_result(check, "error", message, "")
    if not exercised:
        assert check.needs is not None
        try:
            missing = render_explanation(check.needs.missing, names)
        except ExplanationError as exc:
            message = f"what the run lacked could not be rendered: {exc}"
            return _check_result(check, "error", message, "")
        message = f"Not exercised: {missing}: nothing to judge."
        # No hint: nothing was judged, and the check's hint is about what it judges (the relay's
        # poll interval beside "there is no outbox"); the message names where the design is judged.
        return _check_result(check, "not_exercised", message, explanation, hint="")
    template = check.pass_message if passed else check.fail_message
    try:
        message = render_explanation(template, names)
    except ExplanationError as exc:
        message = f"the {'pass' if passed else 'fail'} message could not be rendered: {exc}"
        return _check_result(check, "error", message, "")
    try:
        hint = render_explanation(check.hint, names)
    except ExplanationError as exc:
        return _check_result(check, "error", f"the hint could not be rendered: {exc}", "")
    return _check_result(check, "pass" if passed else "fail", message, explanation, hint)


def _status(statuses: list[CheckStatus] | list[Status]) -> Status:
    """error if any could not run, else fail if any failed or was not exercised, else pass."""
    if "error" in statuses:
        return "error"
    return "pass" if all(s == "pass" for s in statuses) else "fail"


DOWN = "step unavailable: "
"""How a step that did not load, or that lint rejected, begins its message."""

UNREADABLE = "its checks could not be read"
"""Said of a step that did not load and whose file no longer tells its checks."""


def _outline_kind(expr: str | None, scenario: str | None) -> CheckKind:
    """A check's kind from its expression as still readable; without one, simulated when its
    step runs a scenario."""
    try:
        return check_kind(expr) if expr else ("simulated" if scenario else "design_review")
    except SyntaxError:
        return "design_review"


def _unavailable_step(loaded: LoadedStep) -> StepResult:
    """A step that did not load or that lint rejected: every check is an error, with the reason.
    A step whose step.yaml did not load lists the checks still readable in it (their points count
    in the grade's ``max_points``); when none can be read, the message says so (and the grade's
    score is unknown)."""
    reason = "; ".join(str(p) for p in loaded.errors) or "the step could not be loaded"
    message = f"{DOWN}{reason}"
    checks = []
    scenario = loaded.step.scenario if loaded.step else None
    if loaded.step is not None:
        checks = [_check_result(c, "error", message, "") for c in loaded.step.checks]
    elif loaded.outline is not None and loaded.outline.checks is not None:
        scenario = loaded.outline.scenario
        checks = [
            CheckResult(
                id=c.id,
                title=c.title,
                kind=_outline_kind(c.expr, scenario),
                status="error",
                points=0,
                max_points=c.points,
                message=message,
                explanation="",
            )
            for c in loaded.outline.checks
        ]
    else:
        message += f"; {UNREADABLE}"
    return StepResult(
        id=loaded.slug,
        number=loaded.number,
        title=loaded.title,
        status="error",
        points=0,
        max_points=sum(c.max_points for c in checks),
        scenario=scenario,
        seed=None,
        message=message,
        checks=checks,
    )


def _grade_step(grading: _Grading, loaded: LoadedStep) -> StepResult:
    if not loaded.available or loaded.step is None:
        return _unavailable_step(loaded)
    step = loaded.step
    design = grading.design_for(loaded)
    checks = [
        _grade_check(grading, check, step.scenario, design).model_copy(
            update={"scenario": _other_scenario(check, step.scenario)}
        )
        for check in step.checks
    ]
    run = None
    if step.scenario and step.scenario in grading.material.loaded.scenarios:
        run = grading.run(step.scenario, design)
    status = _status([c.status for c in checks])
    message = ""
    truncated = bool(run and run.result and run.result.truncated)
    errors = [c for c in checks if c.status == "error"]
    if run and run.failure:
        status, message = "error", run.failure
    elif errors:
        message = f"{len(errors)} of {_checks(len(checks))} could not run: {errors[0].message}"
    elif truncated:
        message = "the simulation was cut short by a bound on events or wall time"
    return StepResult(
        id=step.id,
        number=loaded.number,
        title=step.title,
        status=status,
        points=sum(c.points for c in checks),
        max_points=sum(c.max_points for c in checks),
        scenario=step.scenario,
        seed=run.seed if run else None,
        message=message,
        checks=checks,
        metrics=run.metrics if run else None,
        cost=run.cost if run else None,
        truncated=truncated,
    )


def design_sha256(design: Design) -> str:
    """SHA-256 of the design's canonical JSON (fields in model order, enums as values)."""
    return hashlib.sha256(design.model_dump_json().encode("utf-8")).hexdigest()


def _checks(count: int) -> str:
    """``1 check``, ``39 checks``: the count of a grade's checks in a summary."""
    return f"{count:,} check" if count == 1 else f"{count:,} checks"


def _unread(steps: list[StepResult]) -> list[str]:
    """Ids of the steps that did not load and whose checks could not be read."""
    return [s.id for s in steps if s.status == "error" and s.message.endswith(UNREADABLE)]


def _summary(status: Status, steps: list[StepResult], points: int, max_points: int) -> str:
    checks = [(s.id, c) for s in steps for c in s.checks]
    unread = _unread(steps)
    score = f"{points}/{max_points} points"
    if unread:
        score += f" counted (the points of step {', '.join(unread)} are unknown)"
    if status == "pass":
        every = "the 1 check" if len(checks) == 1 else f"all {len(checks)} checks"
        return f"Passed {every}: {score}."
    wanted = {"error"} if status == "error" else {"fail", "not_exercised"}
    named = [f"{sid}/{c.id}" for sid, c in checks if c.status in wanted]
    shown = ", ".join(named[:6]) + (f" and {len(named) - 6} more" if len(named) > 6 else "")
    verb = "could not run" if status == "error" else "failed"
    idle = sum(c.status == "not_exercised" for _, c in checks)
    if status != "error" and idle:
        verb += f" ({idle} not exercised: nothing to judge)"
    parts = [f"{len(named)} of {_checks(len(checks))} {verb}: {shown}"] if named else []
    for step in steps:
        if step.status == "error" and step.message.startswith(DOWN):
            parts.append(f"step {step.id} is unavailable ({step.message.removeprefix(DOWN)})")
        elif step.status == "error" and not step.checks:
            parts.append(f"{step.id} ({step.message})")
    return f"{'; '.join(parts)}. {score}."


def grade(
    design: Design,
    material: CourseMaterial,
    *,
    seed: int | None = None,
    simulate: Simulate | None = None,
    only: Sequence[LoadedStep] | None = None,
) -> GradeResult:
    """Grade ``design`` against every step of the course in ``material`` (``only``: these
    steps, in course order; each still judges the design its place in the whole course gives
    it, app.course.step_design).

    ``seed`` is used for every scenario; None means each scenario's own ``seed``. ``simulate``
    defaults to ``simulator.simulate``. Never raises for a failing check, expression, template or
    simulation: those become ``error`` checks and the result's status is ``error``; a simulation
    refused for the design's own fields (a BadInput) also lists those fields in ``errors``.
    Raises app.errors.Unavailable when a simulation could not run through no fault of the design
    (a dead worker, a busy pool): that is no grade at all.

    The result's ``cost`` is the bill of ``design`` as a whole as the course judges it (a field
    no step decides at the course's value: app.course.step_design.course_design), from its own
    run of :func:`cost_scenario` (one more simulation when no step judges exactly that design
    there); None for a grade of part of the course. ``not_judged`` lists the fields of
    ``design`` that value replaced.
    """
    grading = _Grading(design, material, seed, simulate)
    chosen = material.loaded.steps if only is None else only
    steps = [_grade_step(grading, loaded) for loaded in chosen]
    points = sum(s.points for s in steps)
    max_points = sum(s.max_points for s in steps)
    status = _status([s.status for s in steps])
    errors = _refusal_problems(grading)
    # The bill of the learner's design as a whole, from its own run (a step's run is of the
    # step design: the reference's values for the later steps' fields), as the course judges it:
    # a field no step decides takes the course's value there too (app.course.step_design).
    everything = {s.slug for s in chosen} == {s.slug for s in material.loaded.steps}
    priced = cost_scenario(material, chosen)
    whole = course_design(material.loaded, design)
    billed = grading.run(priced, whole) if priced else None
    return GradeResult(
        status=status,
        score=_score(points, max_points, steps),
        points=points,
        max_points=max_points,
        seed=seed,
        simulator_version=SIMULATOR_VERSION,
        message=_summary(status, steps, points, max_points),
        course=material.course.id,
        design_name=design.name,
        design_sha256=design_sha256(design),
        budget_usd=material.course.budget_usd,
        cost=billed.cost if billed else None,
        cost_scenario=priced if billed and billed.cost else None,
        steps=steps,
        errors=errors,
        not_judged=undecided_differences(material.loaded, design) if everything else [],
    )


def _score(points: int, max_points: int, steps: list[StepResult]) -> float | None:
    """points / max_points (0 without points); None when a step's points are unknown (it did
    not load and its checks could not be read): a score without them would claim too much."""
    if _unread(steps):
        return None
    return round(points / max_points, 4) if max_points else 0.0


def step_scenarios(material: CourseMaterial, loaded: LoadedStep) -> list[str]:
    """The course scenarios ``loaded`` reads (the step's, then its checks' own), each once."""
    if loaded.step is None or not loaded.available:
        return []
    wanted = [loaded.step.scenario, *(c.scenario for c in loaded.step.checks)]
    return [n for n in dict.fromkeys(wanted) if n and n in material.loaded.scenarios]


def cost_scenario(material: CourseMaterial, steps: Sequence[LoadedStep]) -> str | None:
    """The scenario a grade of ``steps`` prices the learner's whole design with: the last
    scenario without faults the steps read (a month of its load), when ``steps`` are the whole
    course; None for a grade of part of the course (a step page shows its own step's bill) or a
    course with no scenario without faults."""
    if {s.slug for s in steps} != {s.slug for s in material.loaded.steps}:
        return None
    scenarios = material.loaded.scenarios
    names = [n for loaded in steps for n in step_scenarios(material, loaded)]
    return next((n for n in reversed(names) if not scenarios[n].faults), None)


def _refusal_problems(grading: _Grading) -> list[InputProblem]:
    """The fields named by every refused simulation of the grade, each field once, in order:
    a field several scenarios refused keeps the first one's message and names the others
    ("also refused in 5 more scenarios: peak, poison, ...")."""
    firsts: dict[tuple[str, int | None, str], InputProblem] = {}
    others: dict[tuple[str, int | None, str], list[str]] = {}
    for run in grading.runs.values():
        for p in run.problems:
            where = (p.file, p.line, p.field)
            if where not in firsts:
                firsts[where] = p.model_copy(
                    update={"message": f"{run.scenario.name}: {p.message}"}
                )
                others[where] = []
            elif run.scenario.name not in others[where]:
                others[where].append(run.scenario.name)
    problems = []
    for where, first in firsts.items():
        more = [n for n in others[where] if not first.message.startswith(f"{n}: ")]
        if more:
            scenarios = "scenario" if len(more) == 1 else f"{len(more)} more scenarios"
            first = first.model_copy(
                update={
                    "message": f"{first.message} (also refused in {scenarios}: {', '.join(more)})"
                }
            )
        problems.append(first)
    return problems


def error_result(
    problems: list[InputProblem],
    message: str,
    *,
    seed: int | None = None,
    material: CourseMaterial | None = None,
) -> GradeResult:
    """A complete result for a grade that could not run: bad input or an internal error."""
    return GradeResult(
        status="error",
        score=0.0,
        points=0,
        max_points=0,
        seed=seed,
        simulator_version=SIMULATOR_VERSION,
        message=message,
        course=material.course.id if material else "",
        budget_usd=material.course.budget_usd if material else None,
        errors=problems,
    )


def input_problems(exc: InputFileError) -> list[InputProblem]:
    """Every FieldError of an InputFileError as result problems."""
    return [InputProblem.from_field_error(e) for e in exc.errors]


def problem(file: str, message: str, line: int | None = None, field_name: str = "") -> InputProblem:
    """One InputProblem (for errors that do not come from a YAML file's fields)."""
    return InputProblem.from_field_error(FieldError(file, line, field_name, message))
