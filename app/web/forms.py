"""The decision form of a step: built from its decisions, read back into a validated Design."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from app import poll_interval_floor
from app.course.choices import bundled, fields_set, held_option, option_value, option_values
from app.course.design_fields import design_field, get_value, with_values
from app.course.models import Decision, Step
from simulator.design import Design


@dataclass(frozen=True)
class Option:
    """One option of a select or radio group."""

    value: str
    label: str
    selected: bool


@dataclass(frozen=True)
class FormField:
    """One labelled input of the decision form; ``name`` is the design path it sets."""

    name: str
    id: str
    label: str
    help: str
    unit: str
    widget: str
    value: str
    options: list[Option] = field(default_factory=list)
    min: float | None = None
    max: float | None = None
    step: float | str | None = None
    """The number input's step: the decision's, 1 for an integer field, else "any"."""
    error: str = ""

    @property
    def described_by(self) -> str:
        """Ids of the help and error paragraphs, for aria-describedby ("" when neither)."""
        ids = [f"{self.id}-help" if self.help else "", f"{self.id}-error" if self.error else ""]
        return " ".join(i for i in ids if i)

    @property
    def checked(self) -> bool:
        """For a checkbox: whether it is ticked."""
        return self.value == "true"


def as_form_value(value: Any) -> str:
    """A design value as the string a form input holds (true/false, '' for null, 12 not 12.0)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _options(decision: Decision, current: str) -> list[Option]:
    if bundled(decision):
        return [
            Option(option_value(i), c.label, option_value(i) == current)
            for i, c in enumerate(decision.choices)
        ]
    if decision.choices:
        pairs = [(as_form_value(c.value), c.label) for c in decision.choices]
    else:
        spec = design_field(decision.field)
        values = spec.choices if spec.choices is not None else [True, False]
        pairs = [(as_form_value(v), as_form_value(v).replace("_", " ")) for v in values]
    return [Option(value, label, value == current) for value, label in pairs]


@dataclass(frozen=True)
class Bounds:
    """The range a number field accepts, inclusive at both ends unless ``min_exclusive`` (None:
    unbounded)."""

    min: float | None
    max: float | None
    min_exclusive: bool = False
    """True when ``min`` itself is refused (the design's bound is gt, not ge)."""

    def refusal(self, value: float, unit: str, typed: str | None = None) -> str | None:
        """Why ``value`` is out of range, in the learner's unit, or None when it is in range.
        ``typed``: what the learner typed, echoed as it was (a number read as a float would echo
        99999999999999999999 as 100,000,000,000,000,000,000)."""
        unit_text = f" {unit}" if unit else ""
        got = typed.strip() if typed is not None and typed.strip() else _number_text(value)
        if self.min is not None and self.min_exclusive and value <= self.min:
            return f"Enter more than {_number_text(self.min)}{unit_text}; got {got}."
        if self.min is not None and value < self.min:
            return f"Enter at least {_number_text(self.min)}{unit_text}; got {got}."
        if self.max is not None and value > self.max:
            return f"Enter at most {_number_text(self.max)}{unit_text}; got {got}."
        return None


def _number_text(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,}"


def field_bounds(decision: Decision) -> Bounds:
    """The one definition of a number field's range: the decision's own ``min``/``max`` in
    step.yaml where given, else the design model's bound (pydantic ``ge``/``gt``, ``le``/``lt``).
    The form shows it (the input's min and max) and read_decisions enforces it, so a value the
    form would not offer is refused by the server too (the form has ``novalidate``)."""
    spec = design_field(decision.field)
    low = decision.min if decision.min is not None else spec.minimum
    exclusive = spec.minimum_exclusive and low is not None and low == spec.minimum
    return Bounds(low, decision.max if decision.max is not None else spec.maximum, exclusive)


def build_fields(
    step: Step,
    design: Design,
    errors: Mapping[str, str] | None = None,
    submitted: Mapping[str, str] | None = None,
) -> list[FormField]:
    """The step's decisions as form fields showing ``design``'s values, or what was submitted
    when a submission is shown again (it failed validation, the session expired, the page was
    stale), each with its error message if any."""
    errors = errors or {}
    fields = []
    for decision in step.decisions:
        spec = design_field(decision.field)
        bounds = field_bounds(decision)
        value = (
            held_option(decision, design)
            if bundled(decision)
            else as_form_value(get_value(design, decision.field))
        )
        low = bounds.min
        if decision.field == poll_interval_floor.INTERVAL_FIELD:
            low = max(low or 0, poll_interval_floor.floor_of(design))
        joint = poll_interval_floor.note(design, decision.field, bounds.max)
        if submitted is not None and decision.widget == "checkbox":
            value = "true" if decision.field in submitted else "false"
        elif submitted is not None and decision.field in submitted:
            value = submitted[decision.field]
        fields.append(
            FormField(
                name=decision.field,
                id="f-" + decision.field.replace(".", "-").replace("_", "-"),
                label=decision.label,
                help=f"{decision.help} {joint}".strip() if joint else decision.help,
                unit=decision.unit,
                widget=decision.widget,
                value=value,
                options=_options(decision, value) if decision.widget in ("select", "radio") else [],
                min=low,
                max=bounds.max,
                step=decision.step
                if decision.step is not None
                else (1 if spec.kind == "int" else "any"),
                error=errors.get(decision.field, ""),
            )
        )
    return fields


def read_decisions(
    step: Step, form: Mapping[str, str], design: Design
) -> tuple[Design | None, dict[str, str]]:
    """Apply the submitted values of the step's decisions to ``design``.

    Returns the new Design and no errors, or None and error messages keyed by design path
    (``""`` for an error that belongs to no single field, such as replicas > brokers). A number
    outside the field's range as the form shows it (field_bounds) is an error at that field.
    An unticked checkbox is absent from a form, so it reads as false.
    """
    values: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for decision in step.decisions:
        spec = design_field(decision.field)
        raw = form.get(decision.field)
        if decision.widget == "checkbox":
            raw = "true" if raw is not None else "false"
        if raw is None:
            continue
        if bundled(decision):
            try:
                values.update(option_values(decision, raw))
            except ValueError as exc:
                errors[decision.field] = str(exc)
            continue
        try:
            value = spec.coerce(raw)
        except ValueError as exc:
            errors[decision.field] = str(exc)
            continue
        refusal = None
        if spec.kind in ("int", "float") and value is not None:
            refusal = field_bounds(decision).refusal(value, decision.unit, raw)
        if refusal is not None:
            errors[decision.field] = refusal
        else:
            values[decision.field] = value
    if errors:
        return None, errors
    try:
        edited = with_values(design, values)
    except ValidationError as exc:
        decided = {d.field for d in step.decisions}
        bundles = {p: d.field for d in step.decisions for p in fields_set(d)}
        for err in exc.errors():
            path = ".".join(str(p) for p in err["loc"])
            message = str(err["msg"]).removeprefix("Value error, ")
            errors[path if path in decided else bundles.get(path, "")] = message
        return None, errors
    joint = poll_interval_floor.refusal(edited, {d.field for d in step.decisions})
    if joint is not None:
        return None, {joint[0]: joint[1]}
    return edited, {}
