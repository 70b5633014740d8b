"""A learner's standing per step, read for the overview, the rail and the score so far."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.course.content import LoadedCourse, LoadedStep
from app.models import StepProgress, StepStatus, utcnow


@dataclass(frozen=True)
class StepStanding:
    """What the overview shows for one step: status, points earned and the step's points."""

    status: StepStatus
    points: int
    max_points: int

    @property
    def label(self) -> str:
        """The badge text: "not started", "done 8/10", "needs re-run", ..."""
        if self.status is StepStatus.passed:
            return f"done {self.points}/{self.max_points}" if self.max_points else "done"
        if self.status is StepStatus.failed:
            return f"{self.points}/{self.max_points}, try again"
        return self.status.value.replace("_", " ").replace("rerun", "re-run")


@dataclass(frozen=True)
class ScoreSoFar:
    """The rail's "score so far": points of the runs that still stand for the learner's design
    (a step marked to re-run counts nothing until it is run again), the course's points, and
    how many steps wait for a re-run."""

    points: int
    max_points: int
    to_rerun: int


def score_so_far(standing: dict[str, StepStanding]) -> ScoreSoFar:
    """ScoreSoFar of a learner's standings (from :func:`standings`)."""
    current = [s for s in standing.values() if s.status is not StepStatus.needs_rerun]
    return ScoreSoFar(
        points=sum(s.points for s in current),
        max_points=sum(s.max_points for s in standing.values()),
        to_rerun=len(standing) - len(current),
    )


def max_points(step: LoadedStep) -> int:
    """Points the step's checks are worth in all (0 for a step without checks or unavailable)."""
    return sum(c.points for c in step.step.checks) if step.step is not None else 0


def standings(
    session: Session, user_id: int | None, course: LoadedCourse
) -> dict[str, StepStanding]:
    """Standing per step slug for this learner; every step is present (not started by default)."""
    assert course.course is not None
    rows: dict[str, StepProgress] = {}
    if user_id is not None:
        rows = {
            row.step_id: row
            for row in session.scalars(
                select(StepProgress).where(
                    StepProgress.user_id == user_id,
                    StepProgress.course_id == course.course.id,
                )
            )
        }
    out = {}
    for step in course.steps:
        row = rows.get(step.slug)
        out[step.slug] = StepStanding(
            row.status if row else StepStatus.not_started,
            row.points if row else 0,
            max_points(step),
        )
    return out


def resume_step(course: LoadedCourse, standing: dict[str, StepStanding]) -> LoadedStep | None:
    """The step to continue at: the first available one not passed; None when all are passed."""
    return next(
        (
            s
            for s in course.steps
            if s.available and standing[s.slug].status is not StepStatus.passed
        ),
        None,
    )


def mark_in_progress(session: Session, user_id: int, course_id: str, step_id: str) -> None:
    """Record that the learner has started the step (a no-op once any attempt is recorded)."""
    exists = session.scalar(
        select(StepProgress.id).where(
            StepProgress.user_id == user_id,
            StepProgress.course_id == course_id,
            StepProgress.step_id == step_id,
        )
    )
    if exists is None:
        session.add(
            StepProgress(
                user_id=user_id,
                course_id=course_id,
                step_id=step_id,
                status=StepStatus.in_progress,
                score=0.0,
                points=0,
                max_points=0,
                attempts=0,
            )
        )


def _row(session: Session, user_id: int, course_id: str, step_id: str) -> StepProgress:
    """The learner's progress row for a step, added (not started) when there is none."""
    row = session.scalar(
        select(StepProgress).where(
            StepProgress.user_id == user_id,
            StepProgress.course_id == course_id,
            StepProgress.step_id == step_id,
        )
    )
    if row is None:
        row = StepProgress(
            user_id=user_id,
            course_id=course_id,
            step_id=step_id,
            status=StepStatus.not_started,
            score=0.0,
            points=0,
            max_points=0,
            attempts=0,
        )
        session.add(row)
    return row


def record_run(
    session: Session,
    user_id: int,
    course_id: str,
    step_id: str,
    points: int,
    max_points: int,
    passed: bool,
) -> StepProgress:
    """Record a graded run of a step: status passed or failed, its points, one more attempt."""
    row = _row(session, user_id, course_id, step_id)
    now = utcnow()
    row.status = StepStatus.passed if passed else StepStatus.failed
    row.points = points
    row.max_points = max_points
    row.score = points / max_points if max_points else (1.0 if passed else 0.0)
    row.attempts = (row.attempts or 0) + 1
    row.first_attempt_at = row.first_attempt_at or now
    row.last_attempt_at = now
    return row


def mark_needs_rerun(
    session: Session, user_id: int, course_id: str, step_ids: Iterable[str]
) -> list[str]:
    """Mark the steps among ``step_ids`` that were run (passed or failed) as needing a re-run,
    because the design they were graded on changed. Returns the ids marked."""
    wanted = list(step_ids)
    if not wanted:
        return []
    rows = session.scalars(
        select(StepProgress).where(
            StepProgress.user_id == user_id,
            StepProgress.course_id == course_id,
            StepProgress.step_id.in_(wanted),
            StepProgress.status.in_([StepStatus.passed, StepStatus.failed]),
        )
    )
    marked = []
    for row in rows:
        row.status = StepStatus.needs_rerun
        marked.append(row.step_id)
    return marked
