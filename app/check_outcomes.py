"""Each learner's verdicts per check: the first graded attempt's, kept for good, and the latest.

Whatever grades a learner's step (the step page's "Run the simulation") calls
``record_check_outcomes`` with the step's StepResult, beside ``app.progress.record_run``; the
instructor dashboard ranks the hardest checks by how many learners failed them first time.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.grading.result import FAILED, StepResult
from app.models import CheckOutcome, utcnow


def record_check_outcomes(
    session: Session,
    user_id: int,
    course_id: str,
    result: StepResult,
    at: datetime | None = None,
) -> list[CheckOutcome]:
    """Record one graded attempt of ``user_id`` at the step graded in ``result``.

    Per check of the step: on the first attempt a CheckOutcome row is added whose
    ``first_status`` (pass, fail or error) and ``first_at`` never change after; every attempt
    sets ``last_status`` and ``last_at``, adds one to ``attempts`` and, when the check failed, to
    ``failures``. ``at`` defaults to now (UTC). Returns the rows in the step's check order;
    flushes, and the caller's transaction commits.
    """
    at = at or utcnow()
    known = {
        row.check_id: row
        for row in session.scalars(
            select(CheckOutcome).where(
                CheckOutcome.user_id == user_id,
                CheckOutcome.course_id == course_id,
                CheckOutcome.step_id == result.id,
            )
        )
    }
    rows = []
    for check in result.checks:
        row = known.get(check.id)
        if row is None:
            row = CheckOutcome(
                user_id=user_id,
                course_id=course_id,
                step_id=result.id,
                check_id=check.id,
                first_status=check.status,
                first_at=at,
                attempts=0,
                failures=0,
            )
            session.add(row)
        row.last_status = check.status
        row.last_at = at
        row.attempts += 1
        row.failures += check.status in FAILED
        rows.append(row)
    session.flush()
    return rows
