"""Decisions whose options bundle several design values (``Choice.also``): how a form names an
option, which option a design holds, and the values an option sets.

A plain decision's form value is its field's value. A bundled one's is the option's position
(``c0``, ``c1``, ...), since two options may set the same value of the decision's own field and
differ in what else they set; the option a design holds is the first whose every value the design
has."""

from __future__ import annotations

from typing import Any

from app.course.design_fields import design_field, get_value
from app.course.models import Choice, Decision
from simulator.design import Design


def bundled(decision: Decision) -> bool:
    """True when an option of ``decision`` sets more than its own field."""
    return any(choice.also for choice in decision.choices)


def option_value(index: int) -> str:
    """The form value of a bundled decision's option at ``index``."""
    return f"c{index}"


def fields_set(decision: Decision) -> set[str]:
    """The design fields ``decision`` sets: its own and every option's ``also``."""
    out = {decision.field}
    for choice in decision.choices:
        out |= set(choice.also)
    return out


def _coerced(path: str, value: Any) -> Any:
    return design_field(path).coerce(value) if isinstance(value, str) else value


def _holds(design: Design, decision: Decision, choice: Choice) -> bool:
    wanted = {decision.field: choice.value, **choice.also}
    return all(get_value(design, p) == _coerced(p, v) for p, v in wanted.items())


def held_option(decision: Decision, design: Design) -> str:
    """The form value of the option ``design`` holds ("" when it holds none of a bundled
    decision's options)."""
    for i, choice in enumerate(decision.choices):
        if _holds(design, decision, choice):
            return option_value(i)
    return ""


def option_values(decision: Decision, raw: str) -> dict[str, Any]:
    """The design values a bundled decision's submitted option sets, by dotted path. Raises
    ValueError for a value that names no option."""
    for i, choice in enumerate(decision.choices):
        if raw == option_value(i):
            return {decision.field: choice.value, **choice.also}
    labels = ", ".join(c.label for c in decision.choices)
    raise ValueError(f"choose one of: {labels}")


def option_label(decision: Decision, raw: str) -> str | None:
    """The label of a bundled decision's option by its form value, or None."""
    for i, choice in enumerate(decision.choices):
        if raw == option_value(i):
            return choice.label
    return None
