"""A small class on the second course, built through the app's own functions.

    ana  step 1: few-partitions (4/10), then the reference (10/10); step 2: reference (10/10);
         step 3: endless-retry (4/10)
    bo   step 1: reference (10/10); step 2: commit-first (6/10), then the reference (10/10)
    cy   step 1: few-partitions (4/10)
    dee  registered, nothing done yet

Attempts are graded for real (app.grading on tests/fixtures/second_course) and recorded with
app.progress.record_run and app.check_outcomes.record_check_outcomes, as the step page does.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from app.accounts import create_user
from app.check_outcomes import record_check_outcomes
from app.models import Role
from app.progress import record_run
from tests.instructor.second_course import (
    COMMIT_FIRST,
    COURSE_ID,
    ENDLESS_RETRY,
    FEW_PARTITIONS,
    REFERENCE,
    graded,
)

PASSWORD = "a long password"

ATTEMPTS: list[tuple[str, str, str]] = [
    ("ana@example.com", "size-the-group", FEW_PARTITIONS),
    ("ana@example.com", "size-the-group", REFERENCE),
    ("bo@example.com", "size-the-group", REFERENCE),
    ("ana@example.com", "commit-after-work", REFERENCE),
    ("bo@example.com", "commit-after-work", COMMIT_FIRST),
    ("cy@example.com", "size-the-group", FEW_PARTITIONS),
    ("bo@example.com", "commit-after-work", REFERENCE),
    ("ana@example.com", "park-poison-orders", ENDLESS_RETRY),
]
"""(learner, step, design) in the order they happen."""

LEARNERS = ("ana@example.com", "bo@example.com", "cy@example.com", "dee@example.com")


def attempt(session: Session, user_id: int, step_id: str, design_file: str) -> None:
    """Record one graded attempt of ``design_file`` at ``step_id``, as the step page does."""
    step = graded(design_file)[step_id]
    passed = step.status == "pass"
    record_run(session, user_id, COURSE_ID, step.id, step.points, step.max_points, passed)
    record_check_outcomes(session, user_id, COURSE_ID, step)


def build_class(session: Session) -> dict[str, int]:
    """Create the four learners and their attempts; returns each learner's user id by email."""
    ids = {email: create_user(session, email, Role.learner, PASSWORD).id for email in LEARNERS}
    for email, step_id, design_file in ATTEMPTS:
        attempt(session, ids[email], step_id, design_file)
    return ids
