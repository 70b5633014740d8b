"""Grading's lint rules, run by the course loader: unknown names and fields with file and line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app.course.loader import load_course

FIXTURE = Path(__file__).resolve().parents[2] / "grading" / "fixtures" / "course"


@pytest.fixture
def course(tmp_path: Path) -> Path:
    root = tmp_path / "course"
    shutil.copytree(FIXTURE, root)
    return root


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def _line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def test_the_fixture_course_is_clean(course):
    """No errors in the fixture; its warnings are only the check-kind rules' (it is a course of
    design reviews with fixed sentences on purpose: it grades without simulating)."""
    problems = load_course(course).problems
    assert [str(p) for p in problems if p.severity == "error"] == []
    kinds = ("is a fixed sentence", "design-review checks carry")
    assert [str(p) for p in problems if not any(k in p.message for k in kinds)] == []


def test_an_unknown_name_in_an_expression_names_file_line_and_field(course):
    """``learner`` is not a name a check can read: error at the expr's line, step unavailable."""
    step = course / "02-log" / "step.yaml"
    _replace(step, "design.event_log.partitions >= 40", "learner.partitions >= 40")
    loaded = load_course(course)
    [problem] = loaded.errors
    assert (problem.file, problem.field) == (str(step), "checks.1.expr")
    assert problem.line == _line_of(step, "learner.partitions")
    assert problem.message.startswith("unknown name 'learner'")
    assert not loaded.steps[1].available
    assert loaded.steps[0].available


def test_an_unknown_field_in_an_explanation_is_an_error(course):
    """A misspelt metrics field in explain is caught before any learner sees it."""
    step = course / "02-log" / "step.yaml"
    _replace(step, "{{ design.event_log.partitions }} partitions", "{{ metrics.lsot }} lost")
    [problem] = load_course(course).errors
    assert problem.field == "checks.1.explain"
    assert problem.message == "template line 1: Metrics has no field 'lsot'; did you mean lost?"


def test_a_known_bad_entry_must_name_a_real_check(course):
    """course.yaml known_bad naming a check no step has is an error at that line."""
    course_file = course / "course.yaml"
    _replace(course_file, "fails: [async-start]", "fails: [async-begin]")
    [problem] = load_course(course).errors
    assert (problem.file, problem.field) == (str(course_file), "known_bad.0.fails.0")
    assert problem.line == _line_of(course_file, "async-begin")
    assert problem.message == "no check 'async-begin' in the course"


def test_an_invalid_pricing_catalog_is_an_error(course):
    """A negative price is reported at its line in pricing.yaml."""
    pricing = course / "pricing.yaml"
    _replace(pricing, "runner_usd_per_hour: 0.0832", "runner_usd_per_hour: -1")
    [problem] = load_course(course).errors
    assert (problem.file, problem.field) == (str(pricing), "tool_runners.runner_usd_per_hour")
    assert problem.line == _line_of(pricing, "runner_usd_per_hour")


_OVER_CALLS = """  - id: no-refusals
    title: The provider refuses no call
    points: 1
    expr: metrics.http_429s == 0 and metrics.by_group["agent"].latency_p95_s < 9
    pass: The provider answered every call.
    fail: The provider answered calls with 429.
    explain: "{{ metrics.http_429s }} answered 429."
"""


def test_a_check_over_a_set_that_can_be_empty_must_say_what_it_needs(course):
    """A check reading http_429s and an agent latency without ``needs`` is an error naming the
    counts it must read: an empty set would otherwise pass."""
    step = course / "02-log" / "step.yaml"
    step.write_text(step.read_text() + _OVER_CALLS)
    [problem] = load_course(course).errors
    assert problem.field == "checks.2.expr"
    assert problem.line == _line_of(step, "metrics.http_429s == 0")
    assert problem.message == (
        "the check judges a set that can be empty: add needs with an expr on metrics.model_calls, "
        'metrics.by_group["agent"].processed (e.g. > 0) and what is missing when it is not'
    )


def test_needs_must_read_the_count_of_the_set_judged(course):
    """``needs`` over another count than the one the check judges is an error at needs.expr."""
    step = course / "02-log" / "step.yaml"
    needs = "    needs:\n      expr: metrics.processed > 0\n      missing: nothing ran\n"
    check = _OVER_CALLS.replace("    expr:", needs + "    expr:", 1)
    step.write_text(step.read_text() + check)
    [problem] = load_course(course).errors
    assert problem.field == "checks.2.needs.expr"
    assert problem.message == (
        'needs does not read metrics.model_calls, metrics.by_group["agent"].processed'
    )
