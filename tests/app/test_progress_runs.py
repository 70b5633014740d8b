"""Recording a run of a step, and marking steps to re-run after the design changed."""

from __future__ import annotations

from sqlalchemy import select

from app.db import make_engine, make_sessionmaker, upgrade
from app.models import Role, StepProgress, StepStatus, User
from app.progress import mark_in_progress, mark_needs_rerun, record_run


def test_runs_count_attempts_and_keep_the_first_time(database_url):
    upgrade(database_url)
    factory = make_sessionmaker(make_engine(database_url))
    with factory() as session:
        user = User(role=Role.learner)
        session.add(user)
        session.flush()
        first = record_run(session, user.id, "c", "event-log", 2, 5, passed=False)
        started = first.first_attempt_at
        second = record_run(session, user.id, "c", "event-log", 5, 5, passed=True)
        session.commit()
        assert second is first
        assert (second.status, second.points, second.score, second.attempts) == (
            StepStatus.passed,
            5,
            1.0,
            2,
        )
        assert second.first_attempt_at == started
        assert second.last_attempt_at is not None and second.last_attempt_at >= started


def test_only_steps_that_were_run_are_marked_to_rerun(database_url):
    upgrade(database_url)
    factory = make_sessionmaker(make_engine(database_url))
    with factory() as session:
        user = User(role=Role.learner)
        session.add(user)
        session.flush()
        record_run(session, user.id, "c", "a", 1, 1, passed=True)
        record_run(session, user.id, "c", "b", 0, 1, passed=False)
        mark_in_progress(session, user.id, "c", "c")
        marked = mark_needs_rerun(session, user.id, "c", ["b", "c", "d"])
        session.commit()
        assert marked == ["b"]
        status = {
            p.step_id: p.status
            for p in session.scalars(select(StepProgress).where(StepProgress.user_id == user.id))
        }
        assert status == {
            "a": StepStatus.passed,
            "b": StepStatus.needs_rerun,
            "c": StepStatus.in_progress,
        }
