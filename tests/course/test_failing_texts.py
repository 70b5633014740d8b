"""A failing check's text is computed from the run and adds up: its figures are the same
quantities as the ones beside them, and it names the binding constraint with its numbers (a
learner found "17 retried, 3 redelivered" beside 18 repeats, a 15 s pause evicted with no word of
the 6 s timeout, and "write capacity 80 %" beside 15.3 of 25 writes/s)."""

from __future__ import annotations

import re
from functools import cache

from app.course.choices import bundled
from app.course.design_fields import design_field, get_value
from app.grading.grader import CourseMaterial, grade, load_material
from simulator.design import Design
from simulator.files import load_design
from tests.course.conftest import STEPS_DIR


@cache
def _material() -> CourseMaterial:
    return load_material(STEPS_DIR)


def _reference() -> Design:
    return load_design(STEPS_DIR / _material().course.reference_design)


def _with(design: Design, **values: object) -> Design:
    """``design`` with dotted fields set: ``_with(d, **{"tools.runners": 2})``."""
    data = design.model_dump(mode="json")
    for path, value in values.items():
        *head, last = path.split(".")
        node = data
        for part in head:
            node = node[part]
        node[last] = value
    return Design.model_validate(data)


def _step(design: Design, step_id: str):
    loaded = [s for s in _material().loaded.steps if s.step is not None and s.step.id == step_id]
    (step,) = grade(design, _material(), seed=1, only=loaded).steps
    return step


def _numbers(text: str) -> list[float]:
    return [float(n.replace(",", "")) for n in re.findall(r"\d[\d,]*(?:\.\d+)?", text)]


def test_step_10_tool_key_options_are_distinct_design_values_and_one_is_held():
    """Two options shared ``event_id``, so the starting design (random keys, none sent) held
    none of them and the form showed nothing selected."""
    (step,) = [s.step for s in _material().loaded.steps if s.step and s.step.id == "compensation"]
    start = Design()
    for decision in step.decisions:
        if not decision.choices or bundled(decision):
            continue
        field = design_field(decision.field)
        values = [field.coerce(c.value) if isinstance(c.value, str) else c.value for c in decision.choices]
        assert len(set(values)) == len(values), decision.field
        assert values.count(get_value(start, decision.field)) == 1, decision.field
    fields = {d.field for d in step.decisions}
    assert {"tools.side_effect_idempotency_key", "delivery.idempotency_key_from"} <= fields


def test_step_10_repeated_tool_calls_add_up_by_cause():
    start = Design()
    design = _with(
        _reference(),
        **{
            "tools.side_effect_idempotency_key": start.tools.side_effect_idempotency_key,
            "delivery.idempotency_key_from": start.delivery.idempotency_key_from.value,
        },
    )
    step = _step(design, "compensation")
    check = next(c for c in step.checks if c.id == "side-effect-keys")
    assert check.status == "fail"
    metrics = step.metrics
    assert metrics is not None and metrics.tool_retries_after_effect > 0
    total, retried, again, redelivered = _numbers(check.message)[:4]
    assert total == metrics.duplicate_effects
    assert retried == metrics.tool_retries_after_effect
    assert retried + again == total, check.message
    assert again <= redelivered == metrics.redelivered
