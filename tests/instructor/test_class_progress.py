"""Class figures from the database: who is listed, cells, activity and the hardest checks."""

from __future__ import annotations

from app.accounts import create_user
from app.designs import save_design
from app.instructor.class_progress import class_table, hardest_checks, learner_detail
from app.models import Role, StepStatus, User
from simulator.design import Design
from tests.instructor.classroom import attempt, build_class
from tests.instructor.second_course import COURSE_ID, FEW_PARTITIONS, REFERENCE


def test_every_learner_with_an_account_is_listed_in_email_order(session, second_course):
    build_class(session)
    create_user(session, "ina@example.com", Role.instructor, "a long password")
    table = class_table(session, second_course)
    assert [r.name for r in table.rows] == [
        "ana@example.com",
        "bo@example.com",
        "cy@example.com",
        "dee@example.com",
    ]
    assert [r.total for r in table.rows] == [24, 20, 4, 0]
    assert [r.passed for r in table.rows] == [2, 2, 0, 0]
    assert table.max_total == 30


def test_cells_carry_status_points_and_attempts(session, second_course):
    build_class(session)
    ana = class_table(session, second_course).rows[0]
    assert [(c.status, c.points, c.max_points, c.attempts) for c in ana.cells] == [
        (StepStatus.passed, 10, 10, 2),
        (StepStatus.passed, 10, 10, 1),
        (StepStatus.failed, 4, 10, 1),
    ]
    assert [c.text for c in ana.cells] == ["10/10", "10/10", "4/10"]


def test_activity_runs_from_the_first_attempt_to_the_latest(session, second_course):
    build_class(session)
    ana, bo, cy, dee = class_table(session, second_course).rows
    assert ana.first_activity < bo.first_activity < cy.first_activity
    assert bo.last_activity < ana.last_activity  # ana's step 3 attempt is the class's last
    assert cy.first_activity == cy.last_activity
    assert (dee.first_activity, dee.last_activity) == (None, None)
    assert ana.first_activity.tzinfo is not None


def test_a_guest_is_listed_once_they_have_saved_a_design(session, second_course):
    idle = User(role=Role.learner)
    guest = User(role=Role.learner)
    session.add_all([idle, guest])
    session.flush()
    save_design(session, guest.id, COURSE_ID, Design(), 0)
    (row,) = class_table(session, second_course).rows
    assert (row.user_id, row.name, row.total) == (guest.id, f"guest {guest.id}", 0)
    assert row.first_activity is not None
    assert [c.status for c in row.cells] == [StepStatus.not_started] * 3


def test_hardest_checks_count_first_attempts_only_and_rank_by_them(session, second_course):
    build_class(session)
    found = [
        (d.check_id, d.learners, d.failed_first, d.failed_now)
        for d in hardest_checks(session, second_course)
    ]
    assert found[:5] == [
        ("partitions-cover-in-flight", 3, 2, 1),
        ("peak-keeps-up", 3, 2, 1),
        ("retry-limited", 1, 1, 1),
        ("poison-parked", 1, 1, 1),
        ("restart-loses-nothing", 2, 1, 0),
    ]
    assert [d for d in found[5:] if d[2]] == []


def test_an_instructor_trying_a_step_does_not_count_in_the_hardest_checks(session, second_course):
    ina = create_user(session, "ina@example.com", Role.instructor, "a long password")
    attempt(session, ina.id, "size-the-group", FEW_PARTITIONS)
    assert hardest_checks(session, second_course) == []
    assert class_table(session, second_course).rows == ()


def test_a_learners_detail_lists_first_and_latest_verdicts(session, second_course):
    ids = build_class(session)
    detail = learner_detail(session, second_course, ids["bo@example.com"])
    assert detail is not None
    step2 = detail.steps[1]
    assert (step2.cell.points, step2.cell.attempts) == (10, 2)
    records = {c.check_id: (c.first_status, c.last_status, c.failures) for c in step2.checks}
    assert records["restart-loses-nothing"] == ("fail", "pass", 1)
    assert detail.steps[2].checks == ()
    assert detail.design_yaml is None


def test_there_is_no_detail_for_an_instructor_or_an_unknown_id(session, second_course):
    ina = create_user(session, "ina@example.com", Role.instructor, "a long password")
    attempt(session, ina.id, "size-the-group", REFERENCE)
    assert learner_detail(session, second_course, ina.id) is None
    assert learner_detail(session, second_course, 12345) is None
