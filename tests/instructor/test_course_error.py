"""A course error while the course is live: a YAML typo in one step must not rewrite the grades.

A learner ran every step of the second course on a design that fails step 3 (endless retry:
10 + 10 + 4 = 24 of 30). Then the instructor's typo breaks step 2. Only step 2 is marked
unavailable; its recorded run stands, step 3 (which step 2's decisions feed) is not sent to a
re-run, and the class page, the CSV and the learner's own score so far agree: 24 of 30, no step
to re-run, step 2 named as unavailable.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from sqlalchemy.orm import Session

from app.accounts import create_user
from app.course.content import LoadedCourse
from app.course.loader import load_course
from app.designs import save_design
from app.export import grades_csv
from app.instructor.class_progress import class_table
from app.models import Role, StepStatus, User
from app.progress import checks_sha256, inputs_sha256, record_run, score_so_far, standings
from simulator.files import load_design
from tests.instructor.second_course import COURSE_ID, ENDLESS_RETRY, SECOND_COURSE, graded

PASSWORD = "a long password"


def run_every_step(session: Session, course: LoadedCourse, email: str | None) -> int:
    """A learner (a guest when ``email`` is None) who saved endless-retry and ran every step on
    it, the runs recorded with their fingerprints as the step page records them."""
    if email is None:
        user = User(email=None, role=Role.learner)
        session.add(user)
        session.flush()
    else:
        user = create_user(session, email, Role.learner, PASSWORD)
    design = load_design(SECOND_COURSE / ENDLESS_RETRY)
    save_design(session, user.id, COURSE_ID, design, 0)
    results = graded(ENDLESS_RETRY)
    for step in course.steps:
        result = results[step.slug]
        record_run(
            session, user.id, COURSE_ID, step.slug, result.points, result.max_points,
            passed=result.status == "pass",
            inputs=inputs_sha256(course, step, design),
            checks=checks_sha256(course, step),
        )  # fmt: skip
    session.flush()
    return user.id


def typo_in_step_2(root: Path) -> LoadedCourse:
    """The instructor's typo (``minutes: [5``): step 2's step.yaml is no longer YAML."""
    step_file = root / "02-commit-after-work" / "step.yaml"
    text = step_file.read_text()
    assert "minutes: 5\n" in text
    step_file.write_text(text.replace("minutes: 5\n", "minutes: [5\n"))
    return load_course(root)


def csv_rows(session: Session, course: LoadedCourse) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(grades_csv(class_table(session, course)))))


def test_a_typo_in_one_step_leaves_every_other_step_and_the_totals_as_they_were(
    session, second_course_dir
):
    intact = load_course(second_course_dir)
    learner = run_every_step(session, intact, "lea@example.com")
    before = csv_rows(session, intact)

    broken = typo_in_step_2(second_course_dir)
    assert not broken.steps[1].available
    (row,) = class_table(session, broken).rows
    assert [c.status for c in row.cells] == [
        StepStatus.passed,
        StepStatus.passed,
        StepStatus.failed,  # fed by step 2's decisions: not sent to a re-run by the typo
    ]
    assert [c.unavailable for c in row.cells] == [False, True, False]
    assert (row.total, row.to_rerun) == (24, 0)
    assert class_table(session, broken).max_total == 30

    (lea,) = csv_rows(session, broken)
    steps = ("size-the-group", "commit-after-work", "park-poison-orders")
    assert [lea[s] for s in steps] == ["10", "10", "4"]
    assert (lea["total"], lea["max_total"], lea["steps_to_rerun"]) == ("24", "30", "0")
    assert sum(int(lea[s]) for s in steps) == int(lea["total"])  # the columns add up
    assert lea["steps_unavailable"] == "commit-after-work"
    # Everything else in the row is as before the typo.
    assert {k: v for k, v in lea.items() if k != "steps_unavailable"} == {
        k: v for k, v in before[0].items() if k != "steps_unavailable"
    }

    # The learner's own rail says the same.
    design = load_design(SECOND_COURSE / ENDLESS_RETRY)
    score = score_so_far(standings(session, learner, broken, design))
    assert (score.points, score.max_points, score.to_rerun, score.unavailable) == (24, 30, 0, 1)
    mine = standings(session, learner, broken, design)["commit-after-work"]
    assert mine.label == "unavailable (course error), last run 10/10"


def test_when_the_broken_steps_points_cannot_be_read_the_last_known_ones_count(
    session, second_course_dir
):
    intact = load_course(second_course_dir)
    run_every_step(session, intact, "lea@example.com")
    step_file = second_course_dir / "02-commit-after-work" / "step.yaml"
    step_file.write_text(step_file.read_text().replace("    points: 4\n", "    points: [4\n", 1))
    broken = load_course(second_course_dir)
    assert broken.steps[1].outline is not None and broken.steps[1].outline.checks is None
    table = class_table(session, broken)
    assert table.step_points(broken.steps[1]) == 10  # the points lea's run was judged on
    assert table.max_total == 30
    assert table.rows[0].total == 24


def test_a_guest_is_labelled_alike_on_the_class_page_and_in_the_csv(session, second_course):
    guest = run_every_step(session, second_course, None)
    (row,) = class_table(session, second_course).rows
    assert row.name == f"guest {guest}"
    (line,) = csv_rows(session, second_course)
    assert (line["learner_id"], line["email"], line["learner"]) == (
        str(guest),
        "",
        f"guest {guest}",
    )
