"""The decision form reads a submission back into a design; a setting Kafka refuses comes back
as an error beside the input that must change."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.course.choices import option_value
from app.course.content import LoadedCourse
from app.course.loader import load_course
from app.web.forms import read_decisions
from simulator.design import Acks, Design

STEPS_DIR = Path(__file__).resolve().parents[2] / "steps"


@pytest.fixture(scope="module")
def course() -> LoadedCourse:
    """The real course, whose event-log step offers acks and the idempotent producer."""
    return load_course(STEPS_DIR)


def _event_log_step(course: LoadedCourse):
    [loaded] = [s for s in course.steps if s.slug == "event-log"]
    assert loaded.step is not None
    return loaded.step


def _acks_option(step, acks: str) -> str:
    """The form value of the acks option setting ``acks``: acks is a bundled decision (each
    option sets the idempotent producer with it), so its form value is the option's position."""
    [decision] = [d for d in step.decisions if d.field == "event_log.acks"]
    [index] = [i for i, c in enumerate(decision.choices) if c.value == acks]
    return option_value(index)


def _form(step, **values: str) -> dict[str, str]:
    form = {
        "event_log.partition_key": "task_id",
        "event_log.replication_factor": "3",
        "event_log.min_insync_replicas": "2",
        "event_log.acks": _acks_option(step, "all"),
        "event_log.retention_hours": "168",
        "event_log.auto_offset_reset": "none",
    }
    form.update({k.replace("__", "."): v for k, v in values.items()})
    return form


def test_acks_one_turns_the_idempotent_producer_off_with_it(course):
    """Kafka refuses enable.idempotence without acks=all, so the acks options bundle the
    producer's idempotence: acks=1 read onto a design whose producer was idempotent leaves a
    design Kafka would start, not an error."""
    step = _event_log_step(course)
    idempotent = Design().model_copy(deep=True)
    idempotent.event_log.acks = Acks.all
    idempotent.event_log.enable_idempotence = True
    form = _form(step, event_log__acks=_acks_option(step, "1"))
    design, errors = read_decisions(step, form, idempotent)
    assert errors == {}
    assert design is not None
    assert design.event_log.acks is Acks.leader and not design.event_log.enable_idempotence


def test_idempotence_with_acks_one_is_an_error_at_the_acks_decision(course):
    """An option that bundled idempotence with acks=1 is refused by the design's Kafka rule,
    and the error stands at the decision that set it (the input that must change), not on a
    field the form does not show."""
    step = _event_log_step(course)
    decisions = []
    for decision in step.decisions:
        if decision.field == "event_log.acks":
            choices = [
                c.model_copy(update={"also": {"event_log.enable_idempotence": True}})
                if c.value == "1"
                else c
                for c in decision.choices
            ]
            decision = decision.model_copy(update={"choices": choices})
        decisions.append(decision)
    wrong = step.model_copy(update={"decisions": decisions})
    form = _form(step, event_log__acks=_acks_option(step, "1"))
    design, errors = read_decisions(wrong, form, Design())
    assert design is None
    assert list(errors) == ["event_log.acks"]
    assert "Must set acks to all" in errors["event_log.acks"]


def test_an_acks_value_that_names_no_option_is_an_error_at_acks(course):
    """The bundled decision's form value is an option's position; the bare Kafka value is not
    one."""
    step = _event_log_step(course)
    design, errors = read_decisions(step, _form(step, event_log__acks="all"), Design())
    assert design is None
    assert list(errors) == ["event_log.acks"]
    assert errors["event_log.acks"].startswith("choose one of: ")


def test_replicas_that_do_not_fit_are_errors_at_their_fields(course):
    """Brokers are not decided in the step: a design on one broker cannot take a replication
    factor of 2, nor can two replicas keep three in sync."""
    step = _event_log_step(course)
    one_broker = Design().model_copy(deep=True)
    one_broker.event_log.brokers = 1
    form = _form(step, event_log__replication_factor="2", event_log__min_insync_replicas="3")
    design, errors = read_decisions(step, form, one_broker)
    assert design is None
    assert sorted(errors) == ["event_log.min_insync_replicas", "event_log.replication_factor"]


def test_acks_all_with_idempotence_is_read(course):
    step = _event_log_step(course)
    design, errors = read_decisions(step, _form(step), Design())
    assert errors == {}
    assert design is not None
    assert design.event_log.acks is Acks.all and design.event_log.enable_idempotence
