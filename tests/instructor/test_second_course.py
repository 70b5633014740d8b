"""The second course: the platform lints, self-tests and grades a course that is not steps/."""

from __future__ import annotations

from typer.testing import CliRunner

from app.cli import main
from app.grading.grader import load_material
from app.grading.selftest import self_test
from tests.instructor.second_course import (
    COMMIT_FIRST,
    FEW_PARTITIONS,
    NO_DEDUPE,
    REFERENCE,
    SECOND_COURSE,
    STEPS,
    graded,
)


def test_the_second_course_lints_clean():
    result = CliRunner().invoke(main, ["lint", str(SECOND_COURSE)])
    assert result.exit_code == 0, result.output
    assert result.output.strip().splitlines() == ["3 steps: 0 errors, 0 warnings"]


def test_the_second_course_has_three_steps_of_its_own(second_course):
    assert second_course.course is not None
    assert second_course.course.id == "order-events"
    assert tuple(s.slug for s in second_course.steps) == STEPS
    assert sorted(second_course.scenarios) == ["order-peak", "worker-restart"]
    assert all(s.available for s in second_course.steps)


def test_the_second_course_self_test_passes():
    outcomes = self_test(load_material(SECOND_COURSE))
    assert [str(o) for o in outcomes] == [
        "designs/reference.yaml: ok",
        "designs/bad/few-partitions.yaml: ok",
        "designs/bad/commit-first.yaml: ok",
        "designs/bad/no-dedupe.yaml: ok",
        "designs/bad/endless-retry.yaml: ok",
    ]
    assert outcomes[0].result is not None
    assert (outcomes[0].result.points, outcomes[0].result.max_points) == (30, 30)


def test_grading_reads_the_second_courses_own_scenarios():
    peak = graded(FEW_PARTITIONS)["size-the-group"]
    assert peak.scenario == "order-peak"
    assert peak.metrics is not None and peak.metrics.utilisation > 1
    keeps_up = next(c for c in peak.checks if c.id == "peak-keeps-up")
    assert keeps_up.status == "fail"
    assert "against 25 arriving" in keeps_up.explanation
    restart = graded(COMMIT_FIRST)["commit-after-work"]
    assert restart.scenario == "worker-restart"
    assert restart.metrics is not None and restart.metrics.lost > 0
    assert [c.id for c in restart.checks if c.status != "pass"] == ["restart-loses-nothing"]


def test_points_per_step_for_the_reference_and_a_known_bad_design():
    assert [(s.points, s.max_points) for s in graded(REFERENCE).values()] == [(10, 10)] * 3
    assert [s.points for s in graded(NO_DEDUPE).values()] == [10, 4, 10]
