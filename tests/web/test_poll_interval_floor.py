"""Issue 18, target 4: the agent group's max.poll.interval.ms has a joint bound with the design's
partitions and agent instances (app.poll_interval_floor), shown beside the fields and enforced
by the server, so no design the form accepts makes a replay's rebalance storm outlast 2 s."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.course.loader import load_course
from app.poll_interval_floor import (
    INTERVAL_FIELD,
    most_partitions_and_instances,
    shortest_poll_interval_ms,
)
from app.web.forms import build_fields, read_decisions
from simulator.design import Design
from simulator.files import load_design

STEPS = Path(__file__).resolve().parents[2] / "steps"
COURSE = load_course(STEPS)


def reference() -> Design:
    return load_design(STEPS / "designs" / "reference.yaml")


def _step_with(field: str):
    [step] = [
        s.step for s in COURSE.steps if s.step and any(d.field == field for d in s.step.decisions)
    ]
    return step


STEP_9 = _step_with(INTERVAL_FIELD)
STEP_7 = _step_with("event_log.partitions")


def test_the_reference_keeps_the_forms_shortest_interval_and_the_largest_design_needs_85_s():
    assert shortest_poll_interval_ms(96, 8) == 1_000
    assert shortest_poll_interval_ms(119, 0) == 1_000
    assert shortest_poll_interval_ms(120, 0) == 2_000
    assert shortest_poll_interval_ms(4096, 1024) == 85_000


@pytest.mark.parametrize("total", [1, 104, 119, 120, 1_000, 5_120])
def test_the_two_ways_of_the_bound_agree(total):
    floor = shortest_poll_interval_ms(total, 0)
    assert most_partitions_and_instances(floor) >= total
    if floor > 1_000:
        assert most_partitions_and_instances(floor - 1_000) < total


def _big() -> Design:
    d = reference()
    agent = d.consumers.agent.model_copy(update={"instances": 1024})
    return d.model_copy(
        update={
            "event_log": d.event_log.model_copy(update={"partitions": 4096}),
            "consumers": d.consumers.model_copy(update={"agent": agent}),
        }
    )


def test_step_9_shows_and_enforces_the_floor_for_the_largest_design():
    big = _big()
    [field] = [f for f in build_fields(STEP_9, big) if f.name == INTERVAL_FIELD]
    assert field.min == 85_000
    assert "At least 85,000 ms here" in field.help and "4,096 + 1,024" in field.help
    design, errors = read_decisions(STEP_9, {INTERVAL_FIELD: "84000"}, big)
    assert design is None
    assert errors[INTERVAL_FIELD].startswith("Enter at least 85,000 ms for 4,096 partitions")
    design, errors = read_decisions(STEP_9, {INTERVAL_FIELD: "85000"}, big)
    assert errors == {} and design is not None
    assert design.consumers.agent.max_poll_interval_ms == 85_000


def test_step_9_keeps_1_s_for_the_reference():
    [field] = [f for f in build_fields(STEP_9, reference()) if f.name == INTERVAL_FIELD]
    assert field.min == 1_000
    design, errors = read_decisions(STEP_9, {INTERVAL_FIELD: "1000"}, reference())
    assert errors == {} and design is not None


def test_step_7_refuses_more_partitions_than_a_short_interval_allows_and_says_so():
    d = reference()
    agent = d.consumers.agent.model_copy(update={"max_poll_interval_ms": 1000})
    short = d.model_copy(update={"consumers": d.consumers.model_copy(update={"agent": agent})})
    fields = {f.name: f for f in build_fields(STEP_7, short)}
    note = fields["event_log.partitions"].help
    assert "at most 119 while max.poll.interval.ms is 1,000 ms" in note
    design, errors = read_decisions(STEP_7, {"event_log.partitions": "4096"}, short)
    assert design is None
    assert "at most 119" in errors["event_log.partitions"]
    assert "raise max.poll.interval.ms first" in errors["event_log.partitions"]
    design, errors = read_decisions(STEP_7, {"event_log.partitions": "111"}, short)
    assert errors == {} and design is not None  # 111 + 8 = 119
    # At Kafka's default 300 s, step 7's largest values are within the bound: no note.
    fields = {f.name: f for f in build_fields(STEP_7, reference())}
    assert "may total at most" not in fields["event_log.partitions"].help


def test_step_7_notes_only_the_field_the_bound_narrows():
    d = reference()
    agent = d.consumers.agent.model_copy(update={"max_poll_interval_ms": 60_000})
    design = d.model_copy(update={"consumers": d.consumers.model_copy(update={"agent": agent})})
    fields = {f.name: f for f in build_fields(STEP_7, design)}
    # 60 s allows 3,659 in all: with 8 instances at most 3,651 partitions, under step 7's 4,096;
    # with 96 partitions, 3,563 instances, over its 1,024.
    assert "may total at most 3,659" in fields["event_log.partitions"].help
    assert "may total at most" not in fields["consumers.agent.instances"].help
