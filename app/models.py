"""Persistent tables (SQLAlchemy 2 typed mappings). Every change here needs an Alembic migration."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum

from sqlalchemy import (
    BigInteger,
    DateTime,
    Enum,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from app.roles import Role


def utcnow() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


class Base(DeclarativeBase):
    """Declarative base of every designlab table."""


class StepStatus(StrEnum):
    """Where a learner stands on one step."""

    not_started = "not_started"
    in_progress = "in_progress"
    passed = "passed"
    failed = "failed"
    needs_rerun = "needs_rerun"


class User(Base):
    """A person: a learner or an instructor. Guests have no email and no password yet."""

    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    email: Mapped[str | None] = mapped_column(String(320), unique=True)
    role: Mapped[Role] = mapped_column(
        Enum(Role, name="user_role", native_enum=False, length=16), default=Role.learner
    )
    password_hash: Mapped[str | None] = mapped_column(String(255))
    """argon2id hash in PHC string format (``$argon2id$v=19$...``)."""
    session_generation: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    """Sessions carry the generation they were signed in under; raising it (signing out, a new
    password) ends every copy of every earlier session of this user (app.session_state)."""
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class DesignRecord(Base):
    """A learner's design for one course, as the YAML of contract 1.

    ``version`` is an optimistic lock: app.designs.save_design writes ``WHERE version =
    :expected`` and reports a Conflict when another request saved first; as the mapper's version
    counter it also guards any other ORM update of a record (``StaleDataError``).
    """

    __tablename__ = "designs"
    __table_args__ = (UniqueConstraint("user_id", "course_id", name="uq_designs_user_course"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    course_id: Mapped[str] = mapped_column(String(64))
    version: Mapped[int] = mapped_column(Integer, nullable=False)
    yaml_text: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), default=utcnow, onupdate=utcnow
    )

    __mapper_args__ = {"version_id_col": version}


class StepProgress(Base):
    """A learner's standing on one step: status, best score and attempts with their times."""

    __tablename__ = "step_progress"
    __table_args__ = (
        UniqueConstraint("user_id", "course_id", "step_id", name="uq_step_progress_user_step"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    course_id: Mapped[str] = mapped_column(String(64))
    step_id: Mapped[str] = mapped_column(String(64))
    status: Mapped[StepStatus] = mapped_column(
        Enum(StepStatus, name="step_status", native_enum=False, length=16),
        default=StepStatus.not_started,
    )
    score: Mapped[float] = mapped_column(Float, default=0.0)
    """Fraction of the step's points earned, 0..1."""
    points: Mapped[int] = mapped_column(Integer, default=0)
    max_points: Mapped[int] = mapped_column(Integer, default=0)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    first_attempt_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    last_attempt_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    inputs_sha256: Mapped[str | None] = mapped_column(String(64))
    """SHA-256 hex of the design values that fed the last run (app.progress.inputs_sha256): the
    step needs a re-run exactly when the saved design's differ. None for rows recorded before
    it was kept (their ``status`` stands as stored)."""
    checks_sha256: Mapped[str | None] = mapped_column(String(64))
    """SHA-256 hex of what judged the last run (app.progress.checks_sha256: the step's checks
    and scenarios): the run needs a re-run when an instructor has changed them since. None for
    rows recorded before it was kept (their ``status`` stands as stored)."""


class SimResult(Base):
    """A cached simulation result (contract 3 JSON) for one design, scenario, seed and version."""

    __tablename__ = "sim_results"
    __table_args__ = (
        UniqueConstraint(
            "design_hash",
            "scenario_hash",
            "seed",
            "simulator_version",
            name="uq_sim_results_key",
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    design_hash: Mapped[str] = mapped_column(String(64))
    """SHA-256 hex of the design's canonical JSON."""
    scenario_name: Mapped[str] = mapped_column(String(64))
    scenario_hash: Mapped[str] = mapped_column(String(64))
    """SHA-256 hex of the scenario's canonical JSON, so an edited scenario misses the cache."""
    seed: Mapped[int] = mapped_column(BigInteger)
    simulator_version: Mapped[str] = mapped_column(String(32))
    result_json: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class CheckOutcome(Base):
    """A learner's verdicts on one check: the first graded attempt's and the latest one's.

    One row per learner and check, written by ``app.check_outcomes.record_check_outcomes``.
    ``first_status`` never changes once set, so "failed first time" counts stay true however often
    a learner retries; the instructor dashboard ranks the hardest checks by it.
    """

    __tablename__ = "check_outcomes"
    __table_args__ = (
        UniqueConstraint(
            "user_id", "course_id", "step_id", "check_id", name="uq_check_outcomes_user_check"
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    course_id: Mapped[str] = mapped_column(String(64))
    step_id: Mapped[str] = mapped_column(String(64))
    check_id: Mapped[str] = mapped_column(String(64))
    first_status: Mapped[str] = mapped_column(String(16))
    """The check's status (pass, fail, not_exercised or error) on the learner's first graded
    attempt."""
    first_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    last_status: Mapped[str] = mapped_column(String(16))
    """The status on the latest graded attempt."""
    last_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    """Graded attempts that included this check."""
    failures: Mapped[int] = mapped_column(Integer, default=0)
    """Of those, attempts where the check failed (errors not counted)."""
