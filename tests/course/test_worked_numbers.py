"""Worked numbers typed in the narratives (from the source chapter, not the course's own load) are
proven here with the closed forms; numbers of the course's own load are figures (test_content)."""

from __future__ import annotations

import pytest

from app.course.content import LoadedCourse
from app.course.figures import step_figures
from simulator.assignment import assign_partitions, member_ids, partition_counts
from simulator.capacity import capacity_eps
from simulator.closed_forms.batches import batch_seconds, poll_interval_exceeded
from simulator.closed_forms.drain import backlog_after_outage, drain_seconds
from simulator.closed_forms.saga import saga_outcomes
from simulator.poison import backoffs_for_policy, stall_seconds


def _narrative(course: LoadedCourse, slug: str) -> str:
    step = course.step(slug)
    assert step is not None
    return step.narrative


def test_step_3_assignment_numbers(course: LoadedCourse):
    text = _narrative(course, "event-log")
    assert "six partitions shared by four workers give two workers two partitions each" in text
    assert "with eight workers, two of them own nothing" in text
    four = member_ids(4)
    assert partition_counts(assign_partitions("range", four, 6), four) == [2, 2, 1, 1]
    eight = member_ids(8)
    assert partition_counts(assign_partitions("range", eight, 6), eight).count(0) == 2


def test_step_9_slow_batch_numbers(course: LoadedCourse):
    text = _narrative(course, "worker-crash")
    assert "a batch of 50 records at 2 s each, one after another, takes 100 s" in text
    assert "at 7 s each it needs 350 s, so its consumer is kicked" in text
    assert batch_seconds(50, 2.0) == 100
    assert not poll_interval_exceeded(50, 2.0)
    assert batch_seconds(50, 7.0) == 350
    assert poll_interval_exceeded(50, 7.0)


def test_step_7_sizing_example_numbers(course: LoadedCourse):
    text = _narrative(course, "evening-peak")
    assert "48 partitions at 2.0 s a step against 20 events/s give 4 events/s of headroom" in text
    assert "a 3-minute outage becomes a 15-minute recovery" in text
    assert "with 40 partitions capacity equals arrivals and the backlog never drains" in text
    capacity = capacity_eps(48, 2.0)
    assert capacity - 20 == pytest.approx(4)
    backlog = backlog_after_outage(20, 180)
    assert drain_seconds(backlog, capacity, 20) == pytest.approx(15 * 60)
    assert drain_seconds(backlog, capacity_eps(40, 2.0), 20) is None


def test_step_10_saga_figures_match_the_closed_forms(course: LoadedCourse):
    step = course.step("compensation")
    assert step is not None
    shown = step_figures(course, step)
    saga = saga_outcomes(0.98, 3)
    assert shown["p_complete"] == f"{saga.p_complete:.6f}" == "0.941192"
    assert shown["p_fail"] == f"{saga.p_fail:.6f}" == "0.058808"
    k1, k2, k3 = saga.p_first_failure_at
    assert (shown["p_k1"], shown["p_k2"], shown["p_k3"]) == (f"{k1:.2f}", f"{k2:.4f}", f"{k3:.6f}")
    assert shown["expected_compensations"] == f"{saga.expected_compensations:.6f}" == "0.058016"
    assert shown["p_any_comp"] == f"{saga.p_needs_compensation:.6f}" == "0.038808"


def test_step_12_stall_figures_match_the_poison_closed_form(course: LoadedCourse):
    step = course.step("poison-messages")
    assert step is not None and course.reference_design is not None
    shown = step_figures(course, step)
    retry = course.reference_design.failures.retry
    stall = stall_seconds(backoffs_for_policy(retry))
    assert stall is not None
    assert shown["stall_s"] == f"{stall:,.0f}" == "31"  # 1 + 2 + 4 + 8 + 16
    jittered = stall_seconds(backoffs_for_policy(retry), jitter="full")
    assert shown["stall_jitter_s"] == f"{jittered:.1f}" == "15.5"
