"""A guest's work handed to the account it signs in to, per course, in the caller's transaction."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.accounts import create_user
from app.check_outcomes import record_check_outcomes
from app.db import make_engine, make_sessionmaker, upgrade
from app.designs import load_design, save_design
from app.grading.result import CheckResult, StepResult
from app.guest_work import Handover, courses_with_work, hand_over_guest_work
from app.models import CheckOutcome, DesignRecord, Role, StepProgress, StepStatus, User
from app.progress import record_run
from simulator.design import Design


def failed_step(step_id: str) -> StepResult:
    check = CheckResult(
        id="enough-partitions",
        title="At least 24 partitions",
        kind="design_review",
        status="fail",
        points=0,
        max_points=3,
        message="Too few partitions.",
        explanation="12 partitions, 24 needed",
    )
    return StepResult(
        id=step_id,
        title="The event log",
        status="fail",
        points=0,
        max_points=3,
        scenario=None,
        seed=None,
        checks=[check],
    )


def work(session: Session, user: User, course_id: str, partitions: int) -> None:
    """A design saved twice (version 2), a failed run of step event-log and its check."""
    save_design(session, user.id, course_id, Design(), 0)
    design = Design.model_validate({"event_log": {"partitions": partitions}})
    save_design(session, user.id, course_id, design, 1)
    record_run(session, user.id, course_id, "event-log", 0, 3, passed=False)
    record_check_outcomes(session, user.id, course_id, failed_step("event-log"))


def owners(session: Session, model: Any) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {}
    for row in session.scalars(select(model)):
        out.setdefault(row.course_id, set()).add(row.user_id)
    return out


@pytest.fixture
def session(database_url):
    upgrade(database_url)
    with make_sessionmaker(make_engine(database_url))() as session:
        yield session


def test_work_moves_to_an_account_without_any_and_the_guest_row_goes(session):
    guest = User(role=Role.learner)
    session.add(guest)
    session.flush()
    work(session, guest, "course-a", partitions=48)
    account = create_user(session, "ana@example.com", Role.learner, "a long password")
    session.commit()
    guest_id = guest.id

    assert hand_over_guest_work(session, guest, account) == Handover(("course-a",), ())
    session.commit()

    assert session.get(User, guest_id) is None
    design, version = load_design(session, account.id, "course-a")
    assert (design.event_log.partitions, version) == (48, 2)
    progress = session.scalars(select(StepProgress)).one()
    assert (progress.user_id, progress.status, progress.attempts) == (
        account.id,
        StepStatus.failed,
        1,
    )
    outcome = session.scalars(select(CheckOutcome)).one()
    assert (outcome.user_id, outcome.first_status, outcome.attempts) == (account.id, "fail", 1)


def test_a_course_where_the_account_has_work_keeps_the_accounts_and_leaves_the_guests(session):
    guest = User(role=Role.learner)
    session.add(guest)
    session.flush()
    work(session, guest, "course-a", partitions=48)
    work(session, guest, "course-b", partitions=64)
    account = create_user(session, "bo@example.com", Role.learner, "a long password")
    record_run(session, account.id, "course-b", "event-log", 3, 3, passed=True)
    session.commit()

    handover = hand_over_guest_work(session, guest, account)
    session.commit()

    assert handover == Handover(moved=("course-a",), not_merged=("course-b",))
    assert session.get(User, guest.id) is not None
    for model in (DesignRecord, StepProgress, CheckOutcome):
        assert owners(session, model)["course-a"] == {account.id}, model
    assert owners(session, DesignRecord)["course-b"] == {guest.id}
    assert owners(session, StepProgress)["course-b"] == {guest.id, account.id}
    assert load_design(session, account.id, "course-b") == (Design(), 0)
    assert load_design(session, guest.id, "course-b")[0].event_log.partitions == 64
    assert courses_with_work(session, account.id) == {"course-a", "course-b"}


def test_a_guest_without_work_is_removed_and_nothing_moves(session):
    guest = User(role=Role.learner)
    session.add(guest)
    account = create_user(session, "cy@example.com", Role.learner, "a long password")
    save_design(session, account.id, "course-a", Design(), 0)
    session.commit()
    assert hand_over_guest_work(session, guest, account) == Handover((), ())
    session.commit()
    assert [u.email for u in session.scalars(select(User))] == ["cy@example.com"]


def test_a_rollback_leaves_the_guests_work_where_it_was(session):
    guest = User(role=Role.learner)
    session.add(guest)
    session.flush()
    work(session, guest, "course-a", partitions=48)
    account = create_user(session, "dee@example.com", Role.learner, "a long password")
    session.commit()
    hand_over_guest_work(session, guest, account)
    session.rollback()
    assert session.get(User, guest.id) is not None
    for model in (DesignRecord, StepProgress, CheckOutcome):
        assert owners(session, model) == {"course-a": {guest.id}}, model


def test_an_account_is_not_a_guest(session):
    one = create_user(session, "ed@example.com", Role.learner, "a long password")
    other = create_user(session, "flo@example.com", Role.learner, "a long password")
    with pytest.raises(ValueError, match="not a guest"):
        hand_over_guest_work(session, one, other)
