"""The class at a glance: learners by steps, the checks most learners fail first time, one learner.

Read from StepProgress (app.progress.record_run), CheckOutcome
(app.check_outcomes.record_check_outcomes) and the learners' saved designs. Learners listed: every
learner with an email (registered, started or not) and every guest learner with activity in this
course.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from app.course.content import LoadedCourse, LoadedStep
from app.designs import parse_design
from app.grading.result import FAILED
from app.models import CheckOutcome, DesignRecord, Role, StepProgress, StepStatus, User
from app.progress import StepStanding, max_points, points_known, standings_of


def as_utc(moment: datetime | None) -> datetime | None:
    """``moment`` as an aware UTC datetime (SQLite hands back naive UTC values), or None."""
    if moment is None:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


@dataclass(frozen=True)
class Cell:
    """One learner on one step: status, latest attempt's points, the step's points, attempts;
    ``unavailable`` when the step does not load (a course error: the stored verdict stands),
    ``checks_changed`` when it needs a re-run because its checks changed since the run."""

    status: StepStatus
    points: int
    max_points: int
    attempts: int
    unavailable: bool = False
    checks_changed: bool = False

    @property
    def text(self) -> str:
        """What the table cell shows: "8/10" once attempted, "started" or "-" before."""
        if self.attempts:
            return f"{self.points}/{self.max_points}"
        return "started" if self.status is not StepStatus.not_started else "-"

    @property
    def status_words(self) -> str:
        """The status in words: "passed", "needs re-run", "not started", ..."""
        words = self.status.value.replace("_", " ").replace("rerun", "re-run")
        if self.checks_changed:
            words += " (its checks changed)"
        if self.unavailable:
            words += ", step unavailable (course error)"
        return words

    @property
    def label(self) -> str:
        """The status in words, for the cell's title and screen readers."""
        words = self.status_words
        if not self.attempts:
            return words
        return f"{words}, {self.attempts} attempt{'s' if self.attempts != 1 else ''}"


@dataclass(frozen=True)
class LearnerRow:
    """A learner's row: a Cell per step (course order), total points, first and last activity."""

    user_id: int
    email: str | None
    cells: tuple[Cell, ...]
    first_activity: datetime | None
    last_activity: datetime | None

    @property
    def name(self) -> str:
        """The email, or "guest N" for a guest learner."""
        return self.email or f"guest {self.user_id}"

    @property
    def total(self) -> int:
        """Points that stand: the latest attempt of each step, a step marked to re-run counting
        nothing until it is run again (the learner's own "score so far", app.progress)."""
        return sum(c.points for c in self.cells if c.status is not StepStatus.needs_rerun)

    @property
    def to_rerun(self) -> int:
        """Steps whose latest points are from a run of an earlier design (left out of total)."""
        return sum(c.status is StepStatus.needs_rerun for c in self.cells)

    @property
    def passed(self) -> int:
        """Steps passed."""
        return sum(c.status is StepStatus.passed for c in self.cells)


@dataclass(frozen=True)
class ClassTable:
    """Learners by steps for one course."""

    steps: tuple[LoadedStep, ...]
    rows: tuple[LearnerRow, ...]

    @property
    def unavailable(self) -> tuple[LoadedStep, ...]:
        """The steps that do not load (a course error), in course order: each learner's stored
        verdict on them stands and counts in the total."""
        return tuple(s for s in self.steps if not s.available)

    def step_points(self, step: LoadedStep) -> int:
        """The step's points in all. For a step that did not load, its checks' points as still
        readable in its file; when they are not (see ``points_known``), the most points any
        learner's run of it was judged on (its last known points; 0 when nobody ran it)."""
        if points_known(step):
            return max_points(step)
        return max((r.cells[step.number - 1].max_points for r in self.rows), default=0)

    @property
    def max_total(self) -> int:
        """The course's points in all: every step's :meth:`step_points`."""
        return sum(self.step_points(s) for s in self.steps)


def _learners(session: Session, course_id: str) -> list[User]:
    active = select(StepProgress.user_id).where(StepProgress.course_id == course_id)
    saved = select(DesignRecord.user_id).where(DesignRecord.course_id == course_id)
    query = (
        select(User)
        .where(User.role == Role.learner)
        .where(or_(User.email.is_not(None), User.id.in_(active), User.id.in_(saved)))
        .order_by(User.email.is_(None), User.email, User.id)
    )
    return list(session.scalars(query))


def _activity(
    progress: list[StepProgress], design: DesignRecord | None
) -> tuple[datetime | None, datetime | None]:
    moments = [as_utc(p.first_attempt_at) for p in progress]
    moments += [as_utc(p.last_attempt_at) for p in progress]
    if design is not None:
        moments += [as_utc(design.created_at), as_utc(design.updated_at)]
    known = [m for m in moments if m is not None]
    return (min(known), max(known)) if known else (None, None)


def _rows(session: Session, course: LoadedCourse, users: list[User]) -> list[LearnerRow]:
    assert course.course is not None
    course_id = course.course.id
    ids = [u.id for u in users]
    progress: dict[int, list[StepProgress]] = {i: [] for i in ids}
    for row in session.scalars(
        select(StepProgress).where(
            StepProgress.course_id == course_id, StepProgress.user_id.in_(ids)
        )
    ):
        progress[row.user_id].append(row)
    designs = {
        d.user_id: d
        for d in session.scalars(
            select(DesignRecord).where(
                DesignRecord.course_id == course_id, DesignRecord.user_id.in_(ids)
            )
        )
    }
    rows = []
    for user in users:
        by_step = {p.step_id: p for p in progress[user.id]}
        record = designs.get(user.id)
        design = parse_design(record.yaml_text) if record is not None else None
        standing = standings_of(course, by_step, design)
        cells = tuple(_cell(standing[step.slug], by_step.get(step.slug)) for step in course.steps)
        first, last = _activity(progress[user.id], designs.get(user.id))
        rows.append(LearnerRow(user.id, user.email, cells, first, last))
    return rows


def class_table(session: Session, course: LoadedCourse) -> ClassTable:
    """Every learner (see the module docstring) by every step of ``course``, in course order."""
    assert course.course is not None
    users = _learners(session, course.course.id)
    return ClassTable(course.steps, tuple(_rows(session, course, users)))


def _cell(standing: StepStanding, row: StepProgress | None) -> Cell:
    """The cell of a learner's standing on a step (app.progress.step_standing: the same state
    as the learner's rail and overview) with the attempts of their progress ``row``."""
    return Cell(
        standing.status,
        standing.points,
        standing.max_points,
        row.attempts if row else 0,
        standing.unavailable,
        standing.checks_changed,
    )


@dataclass(frozen=True)
class CheckDifficulty:
    """How a class did on one check the first time it was graded for each learner."""

    step: LoadedStep
    check_id: str
    title: str
    learners: int
    """Learners graded on this check at least once."""
    failed_first: int
    """Of those, learners whose first graded attempt failed it."""
    failed_now: int
    """Of those, learners whose latest attempt still fails it."""

    @property
    def share(self) -> float:
        """failed_first / learners (0 when nobody was graded)."""
        return self.failed_first / self.learners if self.learners else 0.0


def hardest_checks(session: Session, course: LoadedCourse) -> list[CheckDifficulty]:
    """Every check of ``course`` graded for at least one learner, most failed first time first.

    Ties keep course order. Only ``fail`` counts as failing (an ``error`` is the course's or the
    simulator's fault, not the learner's). Only learners (not instructors) are counted.
    """
    assert course.course is not None
    counts: dict[tuple[str, str], list[int]] = {}
    query = (
        select(CheckOutcome.step_id, CheckOutcome.check_id, CheckOutcome.first_status)
        .add_columns(CheckOutcome.last_status)
        .join(User, User.id == CheckOutcome.user_id)
        .where(CheckOutcome.course_id == course.course.id, User.role == Role.learner)
    )
    for step_id, check_id, first, last in session.execute(query):
        tally = counts.setdefault((step_id, check_id), [0, 0, 0])
        tally[0] += 1
        tally[1] += first in FAILED
        tally[2] += last in FAILED
    found = []
    for step in course.steps:
        for check in step.step.checks if step.step is not None else []:
            learners, failed_first, failed_now = counts.get((step.slug, check.id), [0, 0, 0])
            if learners:
                found.append(
                    CheckDifficulty(step, check.id, check.title, learners, failed_first, failed_now)
                )
    return sorted(found, key=lambda d: (-d.failed_first, -d.share))


@dataclass(frozen=True)
class CheckRecord:
    """One learner on one check: first and latest verdicts, attempts and failures."""

    check_id: str
    title: str
    first_status: str
    last_status: str
    attempts: int
    failures: int


@dataclass(frozen=True)
class LearnerStep:
    """One learner on one step: the table's cell and the step's checks as graded for them."""

    step: LoadedStep
    cell: Cell
    first_attempt_at: datetime | None
    last_attempt_at: datetime | None
    checks: tuple[CheckRecord, ...]


@dataclass(frozen=True)
class LearnerDetail:
    """One learner: their row, each step with its checks, and the saved design's YAML."""

    row: LearnerRow
    steps: tuple[LearnerStep, ...]
    design_yaml: str | None
    design_saved_at: datetime | None


def learner_detail(session: Session, course: LoadedCourse, user_id: int) -> LearnerDetail | None:
    """The learner ``user_id`` in ``course``; None when there is no such learner."""
    assert course.course is not None
    user = session.get(User, user_id)
    if user is None or user.role is not Role.learner:
        return None
    course_id = course.course.id
    (row,) = _rows(session, course, [user])
    progress = {
        p.step_id: p
        for p in session.scalars(
            select(StepProgress).where(
                StepProgress.user_id == user_id, StepProgress.course_id == course_id
            )
        )
    }
    outcomes = {
        (o.step_id, o.check_id): o
        for o in session.scalars(
            select(CheckOutcome).where(
                CheckOutcome.user_id == user_id, CheckOutcome.course_id == course_id
            )
        )
    }
    steps = []
    for step, cell in zip(course.steps, row.cells, strict=True):
        records = []
        for check in step.step.checks if step.step is not None else []:
            outcome = outcomes.get((step.slug, check.id))
            if outcome is not None:
                records.append(
                    CheckRecord(
                        check.id,
                        check.title,
                        outcome.first_status,
                        outcome.last_status,
                        outcome.attempts,
                        outcome.failures,
                    )
                )
        p = progress.get(step.slug)
        steps.append(
            LearnerStep(
                step,
                cell,
                as_utc(p.first_attempt_at) if p else None,
                as_utc(p.last_attempt_at) if p else None,
                tuple(records),
            )
        )
    design = session.scalar(
        select(DesignRecord).where(
            DesignRecord.user_id == user_id, DesignRecord.course_id == course_id
        )
    )
    return LearnerDetail(
        row,
        tuple(steps),
        design.yaml_text if design else None,
        as_utc(design.updated_at) if design else None,
    )
