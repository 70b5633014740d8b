"""Issue 16, case 8: the server checks every number field of a step form against the range the
form shows (field_bounds: the decision's min/max, else the design model's bound), so a value the
form would not offer is refused at its field even though the form has ``novalidate``."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.course.loader import load_course
from app.models import DesignRecord
from app.web.forms import Bounds, build_fields, field_bounds, read_decisions
from simulator.design import Design
from tests.web.html import csrf_of, soup
from tests.web.learner import rows, step_form

REPO_STEPS = Path(__file__).resolve().parents[2] / "steps"
COURSE = load_course(REPO_STEPS)
NUMBER_FIELDS = [
    (step, decision)
    for step in COURSE.steps
    if step.step is not None
    for decision in step.step.decisions
    if decision.widget == "number"
]


def test_case8_the_form_shows_the_bounds_the_server_checks():
    for step, decision in NUMBER_FIELDS:
        assert step.step is not None
        [shown] = [f for f in build_fields(step.step, Design()) if f.name == decision.field]
        bounds = field_bounds(decision)
        assert (shown.min, shown.max) == (bounds.min, bounds.max), decision.field


@pytest.mark.parametrize("side", ["below", "above"])
def test_case8_every_number_field_refuses_a_value_outside_its_shown_bounds(side):
    checked = 0
    for step, decision in NUMBER_FIELDS:
        assert step.step is not None
        bounds = field_bounds(decision)
        edge = bounds.min if side == "below" else bounds.max
        if edge is None:
            continue
        outside = edge - 1 if side == "below" else edge + 1
        design, errors = read_decisions(step.step, {decision.field: str(outside)}, Design())
        assert design is None and decision.field in errors, (decision.field, outside)
        word = "at least" if side == "below" else "at most"
        assert errors[decision.field].startswith(f"Enter {word} "), errors[decision.field]
        _, at_edge = read_decisions(step.step, {decision.field: str(edge)}, Design())
        # At its edge the value is in range (another rule, e.g. replicas within brokers, may
        # still refuse it with its own words).
        assert not at_edge.get(decision.field, "").startswith("Enter "), (decision.field, at_edge)
        checked += 1
    # Every number field of the course is bounded on both sides (26 of them as the course
    # stands); a handful would mean the loop above tested almost nothing.
    assert checked >= 20


def test_case8_45_typed_into_a_field_in_ms_that_starts_at_1000_is_refused(client, make_settings):
    """consumers.agent.max_poll_interval_ms is shown with min 1000 (ms); 45 used to be saved."""
    slug = "worker-crash"
    page = soup(client.get(f"/steps/{slug}"))
    field = page.select_one("input[name='consumers.agent.max_poll_interval_ms']")
    assert field is not None and float(field["min"]) == 1000
    form = step_form(client, slug, consumers__agent__max_poll_interval_ms="45")
    assert form["csrf_token"] == csrf_of(page)
    response = client.post(f"/steps/{slug}", data=form)
    assert response.status_code == 422
    shown = soup(response).select_one("input[name='consumers.agent.max_poll_interval_ms']")
    assert shown["value"] == "45" and shown["aria-invalid"] == "true"
    error = soup(response).select_one(f"#{shown['id']}-error").get_text()
    assert error == "Enter at least 1,000 ms; got 45."
    assert rows(make_settings(), DesignRecord) == []


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("0.5", "Enter at least 1,000 ms; got 0.5."),
        ("99999999999999999999", "; got 99999999999999999999."),
    ],
)
def test_an_out_of_range_value_is_echoed_as_typed(client, typed, said):
    """The refusal quotes what the learner typed, not the float it was read as."""
    slug = "worker-crash"
    form = step_form(client, slug, consumers__agent__max_poll_interval_ms=typed)
    response = client.post(f"/steps/{slug}", data=form)
    assert response.status_code == 422
    shown = soup(response).select_one("input[name='consumers.agent.max_poll_interval_ms']")
    error = soup(response).select_one(f"#{shown['id']}-error").get_text()
    assert said in error, error


def test_a_field_the_design_wants_above_0_refuses_0_in_the_forms_words():
    """The cache TTL is gt=0 in the design: a bound taken from it refuses 0 as the form does
    every other bound ("Enter more than 0 hours; got 0."), never with pydantic's "Input should
    be greater than 0"; the step's own widget starts at 1 hour."""
    step = load_course(REPO_STEPS).step("agents-tools-model")
    (ttl,) = [d for d in step.step.decisions if d.field == "model.cache.ttl_hours"]
    assert field_bounds(ttl) == Bounds(1, 8760, False)
    assert field_bounds(ttl).refusal(0, "hours") == "Enter at least 1 hours; got 0."
    unbounded = ttl.model_copy(update={"min": None})
    assert field_bounds(unbounded) == Bounds(0, 8760, True)
    assert field_bounds(unbounded).refusal(0, "hours") == "Enter more than 0 hours; got 0."
    assert field_bounds(unbounded).refusal(0.01, "hours") is None
