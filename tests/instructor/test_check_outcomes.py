"""First-time verdicts per check are kept for good; the latest and the counts follow retries."""

from __future__ import annotations

from sqlalchemy import select

from app.accounts import create_user
from app.check_outcomes import record_check_outcomes
from app.models import CheckOutcome, Role
from tests.instructor.second_course import COURSE_ID, FEW_PARTITIONS, REFERENCE, graded


def test_a_retry_keeps_the_first_verdict_and_counts_the_failure(session):
    user = create_user(session, "ana@example.com", Role.learner, "a long password")
    record_check_outcomes(session, user.id, COURSE_ID, graded(FEW_PARTITIONS)["size-the-group"])
    record_check_outcomes(session, user.id, COURSE_ID, graded(REFERENCE)["size-the-group"])
    rows = session.scalars(select(CheckOutcome).order_by(CheckOutcome.id)).all()
    seen = [(r.check_id, r.first_status, r.last_status, r.attempts, r.failures) for r in rows]
    assert seen == [
        ("partitions-cover-in-flight", "fail", "pass", 2, 1),
        ("slots-cover-partitions", "pass", "pass", 2, 0),
        ("key-per-order", "pass", "pass", 2, 0),
        ("peak-keeps-up", "fail", "pass", 2, 1),
    ]
    assert all(r.first_at <= r.last_at for r in rows)


def test_a_pass_then_a_fail_is_not_a_first_time_failure(session):
    user = create_user(session, "bo@example.com", Role.learner, "a long password")
    record_check_outcomes(session, user.id, COURSE_ID, graded(REFERENCE)["size-the-group"])
    record_check_outcomes(session, user.id, COURSE_ID, graded(FEW_PARTITIONS)["size-the-group"])
    row = session.scalars(
        select(CheckOutcome).where(CheckOutcome.check_id == "peak-keeps-up")
    ).one()
    assert (row.first_status, row.last_status, row.failures) == ("pass", "fail", 1)
