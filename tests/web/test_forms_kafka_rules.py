"""The decision form reads a submission back into a design; a setting Kafka refuses comes back
as an error beside the input that must change."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.course.content import LoadedCourse
from app.course.loader import load_course
from app.web.forms import read_decisions
from simulator.design import Design

STEPS_DIR = Path(__file__).resolve().parents[2] / "steps"


@pytest.fixture(scope="module")
def course() -> LoadedCourse:
    """The real course, whose event-log step offers acks and the idempotent producer."""
    return load_course(STEPS_DIR)


def _event_log_step(course: LoadedCourse):
    [loaded] = [s for s in course.steps if s.slug == "event-log"]
    assert loaded.step is not None
    return loaded.step


def _form(**values: str) -> dict[str, str]:
    form = {
        "event_log.partitions": "96",
        "event_log.partition_key": "run_id",
        "event_log.key_salt_buckets": "1",
        "event_log.brokers": "3",
        "event_log.replication_factor": "3",
        "event_log.min_insync_replicas": "2",
        "event_log.acks": "all",
        "event_log.enable_idempotence": "on",
        "event_log.retention_hours": "168",
        "event_log.auto_offset_reset": "none",
    }
    form.update({k.replace("__", "."): v for k, v in values.items()})
    return form


def test_idempotence_with_acks_one_is_an_error_at_the_idempotence_checkbox(course):
    design, errors = read_decisions(_event_log_step(course), _form(event_log__acks="1"), Design())
    assert design is None
    assert list(errors) == ["event_log.enable_idempotence"]
    assert "Must set acks to all" in errors["event_log.enable_idempotence"]


def test_replicas_that_do_not_fit_are_errors_at_their_fields(course):
    form = _form(event_log__brokers="2", event_log__min_insync_replicas="4")
    design, errors = read_decisions(_event_log_step(course), form, Design())
    assert design is None
    assert sorted(errors) == ["event_log.min_insync_replicas", "event_log.replication_factor"]


def test_acks_all_with_idempotence_is_read(course):
    design, errors = read_decisions(_event_log_step(course), _form(), Design())
    assert errors == {}
    assert design is not None and design.event_log.enable_idempotence
