"""The grader on a two-step fixture course whose checks read only the design."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app.grading.grader import CourseNotGradable, grade, load_material
from app.grading.selftest import self_test
from simulator.design import Design
from simulator.files import load_design

FIXTURE = Path(__file__).parent / "fixtures" / "course"


@pytest.fixture(scope="module")
def material():
    return load_material(FIXTURE)


def test_reference_passes_with_full_marks(material):
    """Every check passes: status pass, score 1, 10/10 points."""
    result = grade(load_design(FIXTURE / "designs" / "reference.yaml"), material)
    assert (result.status, result.score, result.points, result.max_points) == ("pass", 1.0, 10, 10)
    assert result.message == "Passed all 4 checks: 10/10 points."
    assert result.course == "grading-fixture"


def test_checks_stay_in_declared_order(material):
    """Steps in course order, checks in step.yaml order."""
    result = grade(Design(), material)
    assert [(s.id, [c.id for c in s.checks]) for s in result.steps] == [
        ("api", ["async-start", "key-retention"]),
        ("log", ["replicated-log", "enough-partitions"]),
    ]


def test_a_failed_check_explains_with_the_design_numbers(material):
    """The default design fails async-start; the explanation shows its 200."""
    result = grade(Design(), material)
    check = result.steps[0].checks[0]
    assert (check.status, check.points, check.max_points) == ("fail", 0, 2)
    assert check.message == "POST /runs holds the connection while the run works."
    assert check.explanation == "POST /runs answers 200, after a run of about 20 model calls."
    assert (check.hint, check.concept) == (
        "Answer 202 Accepted with the run id.",
        "accept-then-work",
    )


def test_score_is_points_over_max_points(material):
    """thin-log earns 5 of 10 points: score 0.5, status fail, the failed checks named."""
    result = grade(load_design(FIXTURE / "designs" / "bad" / "thin-log.yaml"), material)
    assert (result.status, result.points, result.score) == ("fail", 5, 0.5)
    assert result.message == (
        "2 of 4 checks failed: log/replicated-log, log/enough-partitions. 5/10 points."
    )


def test_known_bad_designs_fail_exactly_their_checks(material):
    """The fixture's self-test: the reference passes, each known-bad fails what it names."""
    outcomes = self_test(material)
    assert [str(o) for o in outcomes] == [
        "designs/reference.yaml: ok",
        "designs/bad/sync-start.yaml: ok",
        "designs/bad/thin-log.yaml: ok",
    ]


def test_self_test_reports_a_known_bad_that_passes(tmp_path):
    """A known-bad design that passes its check is reported, naming the check."""
    course = tmp_path / "course"
    shutil.copytree(FIXTURE, course)
    bad = course / "designs" / "bad" / "sync-start.yaml"
    bad.write_text(bad.read_text().replace("start_status_code: 200", "start_status_code: 202"))
    outcome = self_test(load_material(course))[1]
    assert not outcome.ok
    assert str(outcome) == "designs/bad/sync-start.yaml: passed async-start but should fail"


def test_same_design_gives_identical_json(material):
    """Two grades of one design are byte-identical (no timestamps, no timings)."""
    design = load_design(FIXTURE / "designs" / "bad" / "thin-log.yaml")
    first = grade(design, material).model_dump_json()
    assert grade(design, material).model_dump_json() == first


def test_design_hash_identifies_the_design(material):
    """The SHA-256 changes with any field and not with formatting of the YAML."""
    a = grade(Design(), material).design_sha256
    b = grade(Design.model_validate({"event_log": {"partitions": 13}}), material).design_sha256
    assert len(a) == 64 and a != b


def _edit_check(course: Path, old: str, new: str) -> None:
    step = course / "02-log" / "step.yaml"
    text = step.read_text()
    assert old in text
    step.write_text(text.replace(old, new))


def test_a_failing_expression_is_an_error_not_a_crash(tmp_path):
    """A check that reads metrics in a step without a scenario errors; the others still grade."""
    course = tmp_path / "course"
    shutil.copytree(FIXTURE, course)
    _edit_check(course, "design.event_log.partitions >= 40", "metrics.capacity_eps >= 20")
    result = grade(Design(), load_material(course))
    check = result.steps[1].checks[1]
    assert check.status == "error"
    assert "metrics is not available here" in check.message
    assert result.status == "error"
    assert [c.status for c in result.steps[0].checks] == ["fail", "pass"]


def test_case_5_a_step_with_an_error_check_says_why_in_its_own_message(tmp_path):
    """A step graded error because of one of its checks carries that check's reason, never ""."""
    course = tmp_path / "course"
    shutil.copytree(FIXTURE, course)
    _edit_check(course, "design.event_log.partitions >= 40", "metrics.capacity_eps >= 20")
    step = grade(Design(), load_material(course)).steps[1]
    assert step.status == "error"
    assert step.message.startswith("1 of 2 checks could not run: ")
    assert "metrics is not available here" in step.message


def test_a_failing_explanation_is_an_error(tmp_path):
    """A template that reads metrics where there are none makes its check an error."""
    course = tmp_path / "course"
    shutil.copytree(FIXTURE, course)
    _edit_check(course, "against {{ design.event_log.partitions }}", "against {{ metrics.lost }}")
    result = grade(Design(), load_material(course))
    check = result.steps[1].checks[1]
    assert check.status == "error"
    assert check.message == (
        "the explanation could not be rendered: UndefinedError: 'None' has no attribute 'lost'"
    )


def test_a_hint_is_a_template_over_the_checks_names(tmp_path):
    """A hint that depends on the design renders with the learner's value, not as written."""
    course = tmp_path / "course"
    shutil.copytree(FIXTURE, course)
    _edit_check(
        course, "hint: Add partitions.", "hint: Add to the {{ design.event_log.partitions }}."
    )
    check = grade(Design(), load_material(course)).steps[1].checks[1]
    assert (check.id, check.status) == ("enough-partitions", "fail")
    assert check.hint == f"Add to the {Design().event_log.partitions}."


def test_a_step_that_lint_rejects_is_graded_as_error(tmp_path):
    """A check with an unknown field makes its step unavailable: all its checks error, with why."""
    course = tmp_path / "course"
    shutil.copytree(FIXTURE, course)
    _edit_check(course, "design.event_log.partitions >= 40", "design.event_log.partitons >= 40")
    result = grade(Design(), load_material(course))
    log = result.steps[1]
    assert log.status == "error"
    assert [c.status for c in log.checks] == ["error", "error"]
    assert "EventLogSection has no field 'partitons'" in log.message
    assert "step.yaml:" in log.message


def test_a_broken_pricing_catalog_stops_grading(tmp_path):
    """Without a valid catalog nothing can be priced: CourseNotGradable names file and field."""
    course = tmp_path / "course"
    shutil.copytree(FIXTURE, course)
    pricing = course / "pricing.yaml"
    pricing.write_text(
        pricing.read_text().replace("instance_usd_per_hour: 0.42", "instance_usd_per_hour: -1")
    )
    with pytest.raises(CourseNotGradable) as caught:
        load_material(course)
    assert caught.value.problems[0].field == "brokers.instance_usd_per_hour"
    assert caught.value.problems[0].line is not None


def test_the_summary_counts_one_check_in_the_singular():
    """One check passes as "the 1 check" and fails as "1 of 1 check", never "all 1 checks"."""
    from app.grading.grader import _summary
    from app.grading.result import CheckResult, StepResult

    def step(status):
        check = CheckResult(
            id="only", title="t", kind="design_review", status=status, points=0, max_points=1,
            message="", explanation="", hint="", concept="",
        )  # fmt: skip
        return StepResult(
            id="s", title="t", status=status, points=0, max_points=1, scenario=None, seed=None,
            message="", checks=[check],
        )  # fmt: skip

    assert _summary("pass", [step("pass")], 1, 1) == "Passed the 1 check: 1/1 points."
    assert _summary("fail", [step("fail")], 0, 1) == "1 of 1 check failed: s/only. 0/1 points."
