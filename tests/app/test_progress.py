"""Step standings: badges, the score so far and where to continue."""

from __future__ import annotations

import pytest

from app.course.loader import load_course
from app.db import make_engine, make_sessionmaker, upgrade
from app.models import Role, StepProgress, StepStatus, User
from app.progress import StepStanding, mark_in_progress, resume_step, standings


@pytest.mark.parametrize(
    ("standing", "label"),
    [
        (StepStanding(StepStatus.not_started, 0, 10), "not started"),
        (StepStanding(StepStatus.passed, 8, 10), "done 8/10"),
        (StepStanding(StepStatus.passed, 0, 0), "done"),
        (StepStanding(StepStatus.failed, 3, 10), "3/10, try again"),
        (StepStanding(StepStatus.needs_rerun, 8, 10), "needs re-run"),
        (StepStanding(StepStatus.in_progress, 0, 10), "in progress"),
    ],
)
def test_badge_labels(standing, label):
    assert standing.label == label


def test_standings_and_resume_follow_the_learners_rows(database_url, course_dir):
    url = database_url
    upgrade(url)
    course = load_course(course_dir)
    with make_sessionmaker(make_engine(url))() as session:
        user = User(role=Role.learner)
        session.add(user)
        session.flush()
        before = standings(session, user.id, course)
        assert before["commit-order"] == StepStanding(StepStatus.not_started, 0, 2)
        assert resume_step(course, before).slug == "commit-order"
        session.add(
            StepProgress(
                user_id=user.id,
                course_id="fixture-course",
                step_id="commit-order",
                status=StepStatus.passed,
                score=1.0,
                points=2,
                max_points=2,
                attempts=1,
            )
        )
        mark_in_progress(session, user.id, "fixture-course", "event-log")
        mark_in_progress(session, user.id, "fixture-course", "commit-order")  # keeps "passed"
        session.flush()
        after = standings(session, user.id, course)
        assert after["commit-order"].label == "done 2/2"
        assert after["event-log"].status is StepStatus.in_progress
        assert resume_step(course, after).slug == "event-log"
        assert standings(session, None, course)["commit-order"].status is StepStatus.not_started
