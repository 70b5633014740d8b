"""The parts of a step page computed from the learner's design: the live estimate, the results
of the last run and the architecture diagram.

The results shown are always those of the design as saved: after a run they come from the
simulation cache (a page load grades the step again from the cached simulations, in
milliseconds); after a change that has not been run yet, a note says so instead.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from app.course.choices import fields_set
from app.course.content import LoadedStep
from app.course.design_fields import get_value
from app.course.step_design import decided_later, step_design
from app.grading.grader import CourseMaterial
from app.models import StepStatus
from app.progress import StepStanding
from app.step_runs import cached_runs, grade_with_runs
from app.web.conflicts import design_value_shown
from app.web.diagram import architecture
from app.web.estimate import estimate_view
from app.web.results import StepResults, step_results
from simulator.design import Design

UNCOUNTED_NOTE = (
    "These are the results of your design as it stands (its simulation already ran for another "
    "step), but they are not counted yet: your score counts nothing for this step until you run "
    "it (your last run scored {points}/{max_points} on the design as it was). Run it to count them."
)
RERUN_NOTE = (
    "Your decisions changed since your last run of this step. Run it again to see the results "
    "for the design as it stands."
)
STANDS_NOTE = (
    "Your last run of this step still counts: {points}/{max_points} points, and every value it "
    "depends on is as you ran it. Its simulation is no longer kept (the simulator changed, or "
    "the cache was cleared): run the step to see the results again."
)

CHECKS_CHANGED_NOTE = (
    "This step's checks changed since your last run, which scored {points}/{max_points} under "
    "the checks as they were then. That verdict no longer counts in your score: run the step "
    "again to be graded by the checks as they are now."
)

ATTEMPTED = (StepStatus.passed, StepStatus.failed, StepStatus.needs_rerun)


def last_results(
    session: Session, design: Design, material: CourseMaterial, step: LoadedStep
) -> StepResults | None:
    """The step graded for ``design`` from cached simulations; None when one is not cached."""
    runs = cached_runs(session, design, material, [step])
    if runs is None:
        return None
    graded = grade_with_runs(design, material, [step], runs)
    return step_results(graded.steps[0], runs)


def later_decisions(material: CourseMaterial, step: LoadedStep) -> list[tuple[int, str]]:
    """Per later step (number, the labels of its decisions this step takes from the course's
    neutral design), for the note that says which figures depend on later steps."""
    labels: dict[str, str] = {}
    for other in material.loaded.steps:
        for decision in other.step.decisions if other.step is not None else []:
            labels.setdefault(decision.field, decision.label)
    later = decided_later(material.loaded, step)
    return [
        (number, ", ".join(labels.get(f, f) for f in fields))
        for number, fields in sorted(later.items())
    ]


def unopened_decisions(
    material: CourseMaterial,
    step: LoadedStep,
    design: Design,
    standing: dict[str, StepStanding],
) -> list[tuple[int, str, bool]]:
    """Per earlier step the learner has not worked on yet (standing ``not_started``) that decides
    something: (its number, its decisions with their values in ``design`` in the learner's words,
    whether every one is still the starting design's). This step's figures use them as saved, as
    a design file graded in CI does, so the page says what they are."""
    start = Design()
    out = []
    for other in material.loaded.steps:
        if other.number >= step.number or other.step is None or not other.step.decisions:
            continue
        mine = standing.get(other.slug)
        if mine is None or mine.status is not StepStatus.not_started:
            continue
        decisions = other.step.decisions
        shown = "; ".join(f"{d.label}: {design_value_shown(d, design)}" for d in decisions)
        fields = {f for d in decisions for f in fields_set(d)}
        untouched = all(get_value(design, f) == get_value(start, f) for f in fields)
        out.append((other.number, shown, untouched))
    return out


def numbers_text(numbers: list[int]) -> str:
    """Step numbers in words, runs as ranges: ``[1, 2, 3, 5, 7, 8]`` -> ``"1-3, 5 and 7-8"``,
    ``[4]`` -> ``"4"``, ``[]`` -> ``""``."""
    runs: list[list[int]] = []
    for n in sorted(numbers):
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    parts = [f"{r[0]}-{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs]
    if len(parts) < 2:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def add_step_views(
    context: dict[str, Any],
    session: Session,
    material: CourseMaterial,
    step: LoadedStep,
    results: StepResults | None = None,
) -> dict[str, Any]:
    """Fill ``estimate``, ``results``, ``rerun_note``, ``later_decisions``,
    ``unopened_decisions`` and ``diagram`` of a step page context
    (from step_page_context). Without ``results``, a step the learner has run shows the results
    for the saved design when they are cached, else a note that agrees with the step's standing
    (app.progress.step_standing): "changed since your last run" only when a value feeding the
    step changed, else that the last run still counts. When the step's checks changed since the
    run, no results are shown (grading the old run with the edited checks would be a verdict the
    score does not hold), only the note that says so, with the stored points. Returns
    ``context``."""
    design: Design = context["design"]
    estimate = estimate_view(design, material, step) if step.available else None
    standing: StepStanding = context["standing"][step.slug]
    if results is None and step.available and standing.checks_changed:
        context["rerun_note"] = CHECKS_CHANGED_NOTE.format(
            points=standing.points, max_points=standing.max_points
        )
    elif results is None and step.available and standing.status in ATTEMPTED:
        results = last_results(session, design, material, step)
        if results is None and standing.status is StepStatus.needs_rerun:
            context["rerun_note"] = RERUN_NOTE
        elif results is None:
            context["rerun_note"] = STANDS_NOTE.format(
                points=standing.points, max_points=standing.max_points
            )
        elif standing.status is StepStatus.needs_rerun:
            context["uncounted_note"] = UNCOUNTED_NOTE.format(
                points=standing.points, max_points=standing.max_points
            )
    simulation = results.simulation if results else None
    context["estimate"] = estimate
    context["results"] = results
    context["later_decisions"] = later_decisions(material, step)
    unopened = unopened_decisions(material, step, design, context["standing"])
    context["unopened_decisions"] = unopened
    context["unopened_numbers"] = numbers_text([number for number, _, _ in unopened])
    context["diagram"] = None
    if step.available:  # an unavailable step runs nothing now: no diagram, no "no load" claim
        context["diagram"] = architecture(
            step_design(material.loaded, step, design),
            metrics=simulation.metrics if simulation else None,
            timeseries=simulation.timeseries if simulation else None,
            estimate=estimate.estimate if estimate else None,
            scenario=(results.step.scenario if simulation and results else None)
            or (estimate.scenario if estimate else ""),
        )
    return context
