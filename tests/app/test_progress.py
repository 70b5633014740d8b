"""Step standings: badges, the score so far and where to continue."""

from __future__ import annotations

import pytest

from app.course.loader import load_course
from app.db import make_engine, make_sessionmaker, upgrade
from app.models import Role, StepProgress, StepStatus, User
from app.progress import (
    StepStanding,
    first_decided,
    inputs_sha256,
    mark_in_progress,
    mark_needs_rerun,
    record_run,
    resume_step,
    score_so_far,
    standings,
)
from simulator.design import Design
from tests.factories import REPO_STEPS


@pytest.mark.parametrize(
    ("standing", "label"),
    [
        (StepStanding(StepStatus.not_started, 0, 10), "not started"),
        (StepStanding(StepStatus.passed, 8, 10), "done 8/10"),
        (StepStanding(StepStatus.passed, 0, 0), "done"),
        (StepStanding(StepStatus.failed, 3, 10), "3/10, try again"),
        (StepStanding(StepStatus.needs_rerun, 8, 10), "needs re-run"),
        (StepStanding(StepStatus.in_progress, 0, 10), "in progress"),
        (
            StepStanding(StepStatus.needs_rerun, 8, 10, checks_changed=True),
            "needs re-run: its checks changed",
        ),
        (
            StepStanding(StepStatus.failed, 3, 9, unavailable=True),
            "unavailable (course error), last run 3/9",
        ),
        (
            StepStanding(StepStatus.needs_rerun, 3, 9, unavailable=True),
            "unavailable (course error), last run 3/9 to re-run",
        ),
        (
            StepStanding(StepStatus.not_started, 0, 9, unavailable=True),
            "unavailable (course error)",
        ),
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
        before = standings(session, user.id, course, None)
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
        after = standings(session, user.id, course, None)
        assert after["commit-order"].label == "done 2/2"
        assert after["event-log"].status is StepStatus.in_progress
        assert resume_step(course, after).slug == "event-log"
        nobody = standings(session, None, course, None)
        assert nobody["commit-order"].status is StepStatus.not_started


@pytest.fixture(scope="module")
def real_course():
    return load_course(REPO_STEPS)


def _with(design, path: str, value):
    """A copy of ``design`` with the dotted ``path`` set to ``value``."""
    copy = design.model_copy(deep=True)
    *parents, name = path.split(".")
    target = copy
    for part in parents:
        target = getattr(target, part)
    setattr(target, name, value)
    return copy


def test_partitions_96_97_96_gives_every_step_its_first_fingerprint_back(real_course):
    at_96 = _with(Design(), "event_log.partitions", 96)
    at_97 = _with(at_96, "event_log.partitions", 97)
    back = _with(at_97, "event_log.partitions", 96)
    deciding = first_decided(real_course)["event_log.partitions"]
    for step in real_course.steps[deciding - 1 :]:
        assert inputs_sha256(real_course, step, at_97) != inputs_sha256(real_course, step, at_96)
        assert inputs_sha256(real_course, step, back) == inputs_sha256(real_course, step, at_96)


def test_a_later_steps_decision_does_not_feed_an_earlier_step(real_course):
    timeout = "consumers.agent.session_timeout_ms"
    deciding = first_decided(real_course)[timeout]
    changed = _with(Design(), timeout, 30000)
    for step in real_course.steps:
        same = inputs_sha256(real_course, step, changed) == inputs_sha256(
            real_course, step, Design()
        )
        assert same is (step.number < deciding), step.slug


def _ran(session, user_id, course, design, slug, points, passed):
    step = course.step(slug)
    inputs = inputs_sha256(course, step, design)
    record_run(session, user_id, course.course.id, slug, points, 10, passed=passed, inputs=inputs)


def test_a_run_needs_a_re_run_only_while_a_value_feeding_it_differs(database_url, real_course):
    upgrade(database_url)
    course = real_course
    slugs = [s.slug for s in course.steps]
    at_96 = _with(Design(), "event_log.partitions", 96)
    with make_sessionmaker(make_engine(database_url))() as session:
        user = User(role=Role.learner)
        session.add(user)
        session.flush()
        for slug in slugs:
            _ran(session, user.id, course, at_96, slug, 8, passed=True)
        session.flush()
        assert {s.status for s in standings(session, user.id, course, at_96).values()} == {
            StepStatus.passed
        }
        at_97 = _with(at_96, "event_log.partitions", 97)
        marked = standings(session, user.id, course, at_97)
        decided = first_decided(course)["event_log.partitions"]
        assert [slug for slug in slugs if marked[slug].status is StepStatus.needs_rerun] == [
            s.slug for s in course.steps if s.number >= decided
        ]
        back = standings(session, user.id, course, _with(at_97, "event_log.partitions", 96))
        assert all(s.status is StepStatus.passed for s in back.values())
        assert score_so_far(back).to_rerun == 0


def test_a_run_recorded_without_a_fingerprint_keeps_its_stored_status(database_url, course_dir):
    upgrade(database_url)
    course = load_course(course_dir)
    with make_sessionmaker(make_engine(database_url))() as session:
        user = User(role=Role.learner)
        session.add(user)
        session.flush()
        record_run(session, user.id, "fixture-course", "commit-order", 2, 2, passed=True)
        session.flush()
        assert standings(session, user.id, course, Design())["commit-order"].label == "done 2/2"
        mark_needs_rerun(session, user.id, "fixture-course", ["commit-order"])
        session.flush()
        later = standings(session, user.id, course, Design())["commit-order"]
        assert later.status is StepStatus.needs_rerun


def test_renaming_the_design_feeds_no_step(real_course):
    renamed = Design().model_copy(update={"name": "mine"})
    for step in real_course.steps:
        assert inputs_sha256(real_course, step, renamed) == inputs_sha256(
            real_course, step, Design()
        )
