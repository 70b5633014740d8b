"""A guest learner's work handed to the account it signs in to.

A visitor who starts without an account becomes a guest learner (a user row without an email) on
first saving; signing up names that same row, so its work stays (app.web.signup). Signing in to
an existing account instead hands the guest's work over per course: its saved design, step
progress and check outcomes move to the account when the account has no work in that course.
Where the account has its own, the account's is kept and the guest's is not merged (it stays on
the guest row, which the browser no longer reaches). The rows move as they are, so versions,
statuses, attempts and first verdicts stay true.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select, union, update
from sqlalchemy.orm import Session

from app.models import CheckOutcome, DesignRecord, StepProgress, User

LEARNER_TABLES = (DesignRecord, StepProgress, CheckOutcome)
"""Every table holding a learner's work, each keyed by user_id and course_id."""


@dataclass(frozen=True)
class Handover:
    """What signing in did with a guest's work, as course ids."""

    moved: tuple[str, ...]
    """Courses whose design, progress and check outcomes now belong to the account."""
    not_merged: tuple[str, ...]
    """Courses where the account already had work: the account's was kept, the guest's left."""


def courses_with_work(session: Session, user_id: int) -> set[str]:
    """Ids of the courses where the user has a saved design, step progress or check outcomes."""
    query = union(*(select(t.course_id).where(t.user_id == user_id) for t in LEARNER_TABLES))
    return set(session.scalars(select(query.subquery().c.course_id)))


def hand_over_guest_work(session: Session, guest: User, account: User) -> Handover:
    """Move ``guest``'s work to ``account`` in every course where the account has none.

    The guest row is deleted when nothing of it is left (every course moved, or it had no work).
    Runs in the caller's transaction (no savepoint: with SQLite's driver one would commit on its
    own) and flushes; the caller commits, so the handover is all or nothing. Raises ValueError
    when ``guest`` has an email (it is an account, not a guest) or is ``account``; raises
    sqlalchemy's IntegrityError if the account saved work in one of those courses from
    elsewhere in the meantime (the caller's rollback then leaves everything as it was).
    """
    if guest.email is not None or guest.id == account.id:
        raise ValueError(f"user {guest.id} is not a guest learner distinct from {account.id}")
    guest_courses = courses_with_work(session, guest.id)
    account_courses = courses_with_work(session, account.id)
    moved = sorted(guest_courses - account_courses)
    not_merged = sorted(guest_courses & account_courses)
    if moved:
        for table in LEARNER_TABLES:
            session.execute(
                update(table)
                .where(table.user_id == guest.id, table.course_id.in_(moved))
                .values(user_id=account.id)
                .execution_options(synchronize_session=False)
            )
    if not not_merged:
        session.delete(guest)
    session.flush()
    return Handover(tuple(moved), tuple(not_merged))
