"""Step figures: numbers a narrative shows, computed from the reference design, never typed.

A step's ``figures`` map a name to an expression over the names a check sees (app.checks.names).
They are evaluated against the course's reference design and the step's scenario, with
``estimate`` the closed-form estimate (simulator.estimate) of the two, and ``metrics`` and ``cost``
absent: figures are closed forms, shown before anything is simulated.
narrative.md shows one as ``{{ figures.name }}``; the placeholder is replaced by plain text
substitution, so a narrative is never executed as a template.
"""

from __future__ import annotations

import re
from typing import Any

from app.checks.expressions import ExpressionError, evaluate
from app.checks.names import fmt
from app.course.content import LoadedCourse, LoadedStep
from simulator.estimate import estimate

PLACEHOLDER = re.compile(r"\{\{\s*figures\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
"""``{{ figures.name }}`` in narrative.md (spaces inside the braces optional)."""

MISSING = "?"
"""Shown in place of a figure that is not declared or could not be computed."""


def figure_names(course: LoadedCourse, step: LoadedStep) -> dict[str, Any]:
    """The names a step's figures are evaluated over: the reference design and the step's scenario.

    ``estimate`` is simulator.estimate's estimate of the two (None without a scenario or a
    reference design); ``metrics`` and ``cost`` are None; ``budget_usd`` is the course budget.
    """
    scenario_name = step.step.scenario if step.step is not None else None
    scenario = course.scenarios.get(scenario_name) if scenario_name else None
    design = course.reference_design
    return {
        "design": design,
        "scenario": scenario,
        "metrics": None,
        "cost": None,
        "estimate": estimate(design, scenario) if design and scenario else None,
        "budget_usd": course.course.budget_usd if course.course is not None else None,
        "baseline_cost": None,
    }


def step_figures(course: LoadedCourse, step: LoadedStep) -> dict[str, str]:
    """Each of the step's figures as display text (``fmt`` applied to non-strings).

    Raises ExpressionError naming the figure when one cannot be computed (no reference design,
    a scenario missing, an expression that fails), so lint and tests can point at it.
    """
    if step.step is None or not step.step.figures:
        return {}
    names = figure_names(course, step)
    if names["design"] is None:
        raise ExpressionError("figures need the course's reference design, which did not load")
    shown: dict[str, str] = {}
    for name, expr in step.step.figures.items():
        try:
            value = evaluate(expr, names)
        except ExpressionError as exc:
            raise ExpressionError(f"figure {name!r}: {exc}") from exc
        shown[name] = value if isinstance(value, str) else fmt(value)
    return shown


def narrative_with_figures(course: LoadedCourse, step: LoadedStep) -> str:
    """The step's Markdown with every ``{{ figures.name }}`` replaced by its computed text.

    Never raises: a figure that cannot be computed, or is not declared, shows as ``?`` (lint and
    the course tests report it with its file and name).
    """
    try:
        shown = step_figures(course, step)
    except ExpressionError:
        shown = {}
    return PLACEHOLDER.sub(lambda m: shown.get(m.group(1), MISSING), step.narrative)
