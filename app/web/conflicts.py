"""A stale tab's decisions against the design saved meanwhile: which values differ, and the
learner's choice, per field or for all, of which one to keep.

When a tab saves after another tab (or device) saved, the form comes back (409) listing each of
the step's values where this tab and the saved design differ, with both values. Saving again
needs a choice for every listed field ("this tab's" or "saved"), or one for all of them; a value
chosen "saved" is taken from the design as saved when the choice is submitted. Plain form fields
and submit buttons: it works without JavaScript.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from app.course.choices import bundled, held_option, option_label
from app.course.design_fields import get_value
from app.course.models import Decision, Step
from app.web.forms import as_form_value
from simulator.design import Design

CONFLICT_FIELDS = "conflict_fields"
"""Hidden input: the design paths listed as differing, space-separated."""
KEEP_PREFIX = "keep:"
"""Radio group per listed field, ``keep:<path>``, value MINE or SAVED."""
KEEP_ALL = "keep_all"
"""Submit button's name: one choice (MINE or SAVED) for every listed field."""
MINE = "mine"
SAVED = "saved"


@dataclass(frozen=True)
class Difference:
    """One decision whose value in this tab differs from the saved design's."""

    field: str
    """The design path (the form field's name)."""
    label: str
    mine: str
    """This tab's value as the learner reads it (choice label, "on"/"off", number and unit)."""
    saved: str
    chosen: str
    """MINE, SAVED or "" when not chosen yet."""


def _form_value(decision: Decision, form: Mapping[str, str], design: Design) -> str:
    """The decision's value in ``form`` as the form holds it (an unticked checkbox is absent,
    so false); the design's value when the form lacks the field."""
    if decision.widget == "checkbox":
        return "true" if decision.field in form else "false"
    if decision.field in form:
        return form[decision.field]
    return _saved_value(decision, design)


def _saved_value(decision: Decision, design: Design) -> str:
    """The decision's value in ``design`` as the form holds it."""
    if bundled(decision):
        return held_option(decision, design)
    return as_form_value(get_value(design, decision.field))


def shown_value(decision: Decision, value: str) -> str:
    """A form value in the learner's words: the choice's label, "on"/"off" for a checkbox, the
    number with its unit, "(empty)" for nothing."""
    if decision.widget == "checkbox":
        return "on" if value == "true" else "off"
    if bundled(decision):
        return option_label(decision, value) or "(empty)"
    for choice in decision.choices:
        if as_form_value(choice.value) == value:
            return choice.label
    if not value:
        return "(empty)"
    shown = value.replace("_", " ") if decision.widget in ("select", "radio") else value
    return f"{shown} {decision.unit}" if decision.unit else shown


def design_value_shown(decision: Decision, design: Design) -> str:
    """``decision``'s value in ``design`` in the learner's words (:func:`shown_value`)."""
    return shown_value(decision, _saved_value(decision, design))


def differences(step: Step, form: Mapping[str, str], saved: Design) -> list[Difference]:
    """The step's decisions whose value in ``form`` (this tab) differs from ``saved``, in the
    step's order, each with the choice already made in ``form`` (a field's own or KEEP_ALL)."""
    found = []
    every = form.get(KEEP_ALL, "")
    for decision in step.decisions:
        mine = _form_value(decision, form, saved)
        theirs = _saved_value(decision, saved)
        if mine == theirs:
            continue
        chosen = every or form.get(KEEP_PREFIX + decision.field, "")
        found.append(
            Difference(
                decision.field,
                decision.label,
                shown_value(decision, mine),
                shown_value(decision, theirs),
                chosen if chosen in (MINE, SAVED) else "",
            )
        )
    return found


@dataclass(frozen=True)
class Resolution:
    """A submitted form with the learner's choices applied, or the fields still unchosen."""

    form: dict[str, str]
    unchosen: tuple[Difference, ...]


def resolve(step: Step, form: Mapping[str, str], saved: Design) -> Resolution:
    """Apply the choices of a form that listed differences (it has CONFLICT_FIELDS): every
    listed field that still differs from ``saved`` takes the saved value where SAVED was chosen
    (for it or for all) and keeps this tab's where MINE was. A listed field without a choice is
    returned in ``unchosen`` (nothing may be saved then); a field not listed keeps this tab's
    value. A form without CONFLICT_FIELDS comes
    back as it is."""
    resolved = dict(form)
    if CONFLICT_FIELDS not in form:
        return Resolution(resolved, ())
    listed = set(form[CONFLICT_FIELDS].split())
    by_field = {d.field: d for d in step.decisions}
    unchosen = []
    for diff in differences(step, form, saved):
        if diff.field not in listed:
            continue  # changed in this tab after the differences were shown: this tab's value
        if not diff.chosen:
            unchosen.append(diff)
            continue
        if diff.chosen == SAVED:
            decision = by_field[diff.field]
            value = as_form_value(get_value(saved, diff.field))
            if decision.widget == "checkbox":
                resolved.pop(diff.field, None)
                if value == "true":
                    resolved[diff.field] = "true"
            else:
                resolved[diff.field] = value
    return Resolution(resolved, tuple(unchosen))


def choose_message(unchosen: tuple[Difference, ...]) -> str:
    """The 409 message when the learner saved without choosing for every listed field."""
    names = ", ".join(d.label for d in unchosen)
    return (
        "Your design was saved elsewhere, and these values differ from it: "
        f"{names}. Choose for each whether to keep this tab's value or the saved one (or "
        "choose for all of them), then save."
    )
