"""The course loader: every problem names file, line and field; one bad step leaves the rest up."""

from __future__ import annotations

import os
from pathlib import Path

from app.course.loader import CourseCache, load_course
from tests.factories import write

REPO_STEPS = Path(__file__).resolve().parents[3] / "steps"


def problem_lines(course) -> list[str]:
    return [str(p) for p in course.problems]


def test_a_valid_course_loads_every_step_in_order(course_dir):
    course = load_course(course_dir)
    assert course.problems == ()
    assert [s.slug for s in course.steps] == ["commit-order", "event-log", "worker-crash"]
    assert [s.number for s in course.steps] == [1, 2, 3]
    assert all(s.available for s in course.steps)
    assert set(course.scenarios) == {"peak"}
    assert course.reference_design is not None and course.reference_design.name == "reference"


def test_a_broken_step_is_unavailable_and_the_others_stay_up(course_dir):
    write(course_dir / "02-event-log" / "step.yaml", "id: event-log\ntitle: [unclosed\n")
    course = load_course(course_dir)
    broken = course.step("event-log")
    assert broken is not None and not broken.available
    assert [s.available for s in course.steps] == [True, False, True]
    (error,) = broken.errors
    assert error.file.endswith("02-event-log/step.yaml") and error.line == 2  # the last line
    assert "YAML syntax" in error.message


def test_every_invalid_field_is_listed_with_its_line(course_dir):
    write(
        course_dir / "02-event-log" / "step.yaml",
        """\
        id: Event Log
        title: The event log
        summary: ok
        minutes: -1
        colour: red
        """,
    )
    course = load_course(course_dir)
    found = {(p.line, p.field) for p in course.step("event-log").errors}
    assert found == {(1, "id"), (4, "minutes"), (5, "colour")}
    assert str(course.step("event-log").errors[0]).startswith(
        str(course_dir / "02-event-log" / "step.yaml") + ":1: error: id: "
    )


def test_a_missing_required_field_points_at_the_parent_line(course_dir):
    write(course_dir / "03-worker-crash" / "step.yaml", "id: worker-crash\nsummary: s\n")
    (error,) = load_course(course_dir).step("worker-crash").errors
    assert (error.line, error.field, error.message) == (1, "title", "Field required")


def test_a_missing_folder_and_a_missing_narrative_are_errors(course_dir):
    (course_dir / "03-worker-crash" / "narrative.md").unlink()
    text = (course_dir / "course.yaml").read_text() + "  - 04-not-there\n"
    write(course_dir / "course.yaml", text)
    course = load_course(course_dir)
    assert [s.available for s in course.steps] == [True, True, False, False]
    messages = {(Path(p.file).name, p.message) for p in course.errors}
    assert ("narrative.md", "file is missing") in messages
    assert ("04-not-there", "step folder is missing") in messages


def test_a_broken_course_yaml_loads_nothing_but_says_why(course_dir):
    write(course_dir / "course.yaml", "version: 2\ntitle: x\n")
    course = load_course(course_dir)
    assert course.course is None and course.steps == ()
    fields = {p.field for p in course.errors}
    assert {"version", "id", "steps", "budget_usd"} <= fields


def test_an_invalid_scenario_is_reported_and_left_out(course_dir):
    write(course_dir / "scenarios" / "poison.yaml", "version: 1\nname: poison\nseed: -3\n")
    course = load_course(course_dir)
    assert set(course.scenarios) == {"peak"}
    (error,) = course.errors
    assert (Path(error.file).name, error.line, error.field) == ("poison.yaml", 3, "seed")


def test_an_unlisted_step_folder_is_a_warning(course_dir):
    write(course_dir / "99-draft" / "step.yaml", "id: draft\n")
    course = load_course(course_dir)
    assert course.errors == ()
    assert [Path(w.file).name for w in course.warnings] == ["99-draft"]


def test_cache_reloads_after_a_change_when_watching(course_dir):
    cache = CourseCache(course_dir, watch=True)
    assert cache.get().step("event-log").title == "The event log"
    assert cache.get() is cache.get()
    path = course_dir / "02-event-log" / "step.yaml"
    path.write_text(path.read_text().replace("The event log", "The partitioned log"))
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    assert cache.get().step("event-log").title == "The partitioned log"


def test_cache_keeps_the_first_load_when_not_watching(course_dir):
    cache = CourseCache(course_dir, watch=False)
    first = cache.get()
    write(course_dir / "02-event-log" / "step.yaml", "broken: [")
    assert cache.get() is first


def test_the_shipped_course_has_thirteen_available_steps():
    course = load_course(REPO_STEPS)
    assert course.errors == (), "\n".join(map(str, course.errors))
    assert len(course.steps) == 13
    assert all(s.step is not None and s.step.summary.strip() for s in course.steps)
