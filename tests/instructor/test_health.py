"""Course health: findings per file in lint order, the course version, background self-tests."""

from __future__ import annotations

from app.course.loader import load_course
from app.instructor.health import SelfTests, clean_files, course_version, findings_by_file

WAIT_SECONDS = 120


def test_findings_are_grouped_per_file_in_lint_order(second_course_dir):
    (second_course_dir / "scenarios" / "order-peak.yaml").write_text(
        (second_course_dir / "scenarios" / "order-peak.yaml")
        .read_text()
        .replace("name: order-peak", "name: peak")
    )
    step = second_course_dir / "01-size-the-group" / "step.yaml"
    text = step.read_text().replace("concept: the-key", "concept: the-keys")
    step.write_text(text.replace("scenario: order-peak", "scenario: order-peek"))
    course = load_course(second_course_dir)
    found = findings_by_file(course)
    assert [f.path for f in found] == [
        "01-size-the-group/step.yaml",
        "scenarios/order-peak.yaml",
    ]
    lines = step.read_text().splitlines()
    scenario_line = next(i for i, t in enumerate(lines, 1) if "order-peek" in t)
    concept_line = next(i for i, t in enumerate(lines, 1) if "the-keys" in t)
    assert [(p.line, p.severity, p.field) for p in found[0].problems] == [
        (scenario_line, "error", "scenario"),
        (concept_line, "error", "checks.2.concept"),
    ]
    assert (found[0].errors, found[0].warnings) == (2, 0)
    assert (found[1].errors, found[1].warnings) == (0, 1)
    assert "scenarios/order-peak.yaml" not in clean_files(course, found)
    assert "course.yaml" in clean_files(course, found)


def test_the_course_version_changes_with_any_file_and_only_then(second_course_dir):
    before = course_version(second_course_dir)
    assert course_version(second_course_dir) == before
    (second_course_dir / "designs" / "bad" / "commit-first.yaml").write_text("version: 1\n")
    assert course_version(second_course_dir) != before


def test_a_self_test_runs_once_per_version_unless_asked_again(second_course_dir):
    runs = SelfTests()
    version = course_version(second_course_dir)
    run = runs.start(second_course_dir, version)
    assert runs.start(second_course_dir, version) is run  # still running, or done: reused
    assert run.done.wait(WAIT_SECONDS)
    assert run.ok and [o.file for o in run.outcomes][0] == "designs/reference.yaml"
    assert runs.start(second_course_dir, version) is run
    again = runs.start(second_course_dir, version, again=True)
    assert again is not run and runs.get(version) is again
    assert again.done.wait(WAIT_SECONDS)


def test_a_course_that_cannot_grade_ends_the_run_with_the_reason(second_course_dir):
    (second_course_dir / "pricing.yaml").write_text("version: 1\n")
    runs = SelfTests()
    run = runs.start(second_course_dir, course_version(second_course_dir))
    assert run.done.wait(WAIT_SECONDS)
    assert run.error.startswith("the course cannot be graded: ")
    assert "pricing.yaml" in run.error
    assert not run.ok


def test_only_the_latest_versions_are_kept(second_course_dir):
    runs = SelfTests(keep=2)
    (second_course_dir / "pricing.yaml").write_text("version: 1\n")  # fails fast
    started = [runs.start(second_course_dir, f"v{i}") for i in range(3)]
    for run in started:
        assert run.done.wait(WAIT_SECONDS)
    assert runs.get("v0") is None and runs.get("v2") is started[2]
