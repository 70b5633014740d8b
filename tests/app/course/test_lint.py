"""Lint rules: each finds its problem at the right line and marks the step unavailable."""

from __future__ import annotations

from pathlib import Path

from app.course.content import LoadedCourse, Problem
from app.course.lint import (
    RULES,
    expression_syntax_error,
    run_rules,
    template_syntax_error,
)
from app.course.loader import load_course
from tests.factories import DECIDING_STEP, write

STEP = Path("01-commit-order") / "step.yaml"


def errors_of(course_dir: Path, step_text: str) -> list[tuple[int | None, str, str]]:
    write(course_dir / STEP, step_text)
    step = load_course(course_dir).step("commit-order")
    assert step is not None
    return [(p.line, p.field, p.message) for p in step.errors]


def test_an_unknown_design_field_names_its_line(course_dir):
    found = errors_of(course_dir, DECIDING_STEP.replace("event_log.partitions", "event_log.shards"))
    assert found == [
        (10, "decisions.1.field", "event_log.shards: the design has no field 'event_log.shards'")
    ]


def test_a_widget_must_fit_the_field(course_dir):
    text = DECIDING_STEP.replace("widget: checkbox", "widget: number")
    (found,) = errors_of(course_dir, text)
    assert found[:2] == (23, "decisions.3.widget")
    assert "numeric" in found[2]


def test_a_choice_value_the_design_refuses_is_an_error(course_dir):
    text = DECIDING_STEP.replace("value: none", "value: sometimes")
    (found,) = errors_of(course_dir, text)
    assert found[:2] == (19, "decisions.2.choices.0.value")
    assert "'sometimes' for delivery.dedupe" in found[2]


def test_an_unknown_scenario_is_an_error(course_dir):
    (found,) = errors_of(course_dir, DECIDING_STEP.replace("scenario: peak", "scenario: peek"))
    assert found[:2] == (4, "scenario")
    assert "unknown scenario 'peek'" in found[2]


def test_duplicate_check_ids_and_bad_expressions_are_all_listed(course_dir):
    check = DECIDING_STEP[DECIDING_STEP.index("  - id: no-loss") :]
    broken = check.replace("metrics.lost == 0", "metrics.lost ==").replace(
        '"{{ metrics.lost }} events lost"', '"{{ metrics.lost "'
    )
    found = errors_of(course_dir, DECIDING_STEP + broken)
    assert [(line, field) for line, field, _ in found] == [
        (25, "checks.0.id"),
        (36, "checks.1.id"),
        (39, "checks.1.expr"),
        (42, "checks.1.explain"),
    ]


def test_a_concept_without_its_heading_is_an_error(course_dir):
    """The check's 'Read' link would lead nowhere: a dead link is an error, the step is down."""
    write(course_dir / STEP, DECIDING_STEP.replace("concept: commit-order", "concept: dedupe"))
    course = load_course(course_dir)
    (error,) = course.errors
    assert (error.line, error.field) == (32, "checks.0.concept")
    assert error.message.startswith("no heading with anchor 'dedupe' in narrative.md")
    assert not course.warnings
    assert not course.step("commit-order").available


def test_syntax_helpers_accept_good_input_and_explain_bad():
    assert (
        expression_syntax_error("metrics.lost == 0 and design.event_log.partitions >= 12") is None
    )
    assert "does not parse" in expression_syntax_error("metrics.lost = 0")
    assert template_syntax_error("{{ fmt(metrics.drain_seconds) }} s") is None
    assert "template line 2" in template_syntax_error("ok\n{% if x %}")


def test_a_rule_that_crashes_is_reported_not_raised(course_dir):
    def broken_rule(course: LoadedCourse) -> list[Problem]:
        raise RuntimeError("boom")

    course = load_course(course_dir)
    (problem,) = run_rules(course, [broken_rule])
    assert problem.severity == "error"
    assert "broken_rule failed: RuntimeError: boom" in problem.message


def test_rules_are_a_plain_list_others_can_extend():
    assert all(callable(rule) for rule in RULES) and len(RULES) >= 5


def test_a_baseline_must_be_an_earlier_step(course_dir):
    """Step 1 has no earlier step to compare its bill with; a check that reads baseline_cost
    without a baseline_step would read None."""
    ahead = DECIDING_STEP.replace(
        "    concept: commit-order\n", "    concept: commit-order\n    baseline_step: 1\n"
    )
    found = errors_of(course_dir, ahead)
    assert [(f, m) for _, f, m in found] == [
        (
            "checks.0.baseline_step",
            "baseline_step 1 is not an earlier step of the course (this is step 1)",
        )
    ]
    unnamed = DECIDING_STEP.replace(
        "expr: metrics.lost == 0", "expr: cost.monthly_usd <= baseline_cost.monthly_usd"
    )
    found = errors_of(course_dir, unnamed)
    assert any(
        f == "checks.0" and "reads baseline_cost without a baseline_step" in m for _, f, m in found
    ), found
