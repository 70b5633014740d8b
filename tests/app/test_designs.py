"""A learner's design is saved as YAML with a version; a stale version is a conflict."""

from __future__ import annotations

import pytest

from app.db import make_engine, make_sessionmaker, upgrade
from app.designs import load_design, save_design
from app.errors import Conflict
from app.models import Role, User
from simulator.design import Design


@pytest.fixture
def session(database_url):
    url = database_url
    upgrade(url)
    with make_sessionmaker(make_engine(url))() as s:
        yield s


def test_no_saved_design_is_the_default_at_version_0(session):
    assert load_design(session, None, "course") == (Design(), 0)


def test_save_then_load_round_trips_with_increasing_versions(session):
    user = User(role=Role.learner)
    session.add(user)
    session.flush()
    design = Design(name="mine")
    assert save_design(session, user.id, "course", design, expected_version=0) == 1
    changed = design.model_copy(update={"name": "mine, v2"})
    assert save_design(session, user.id, "course", changed, expected_version=1) == 2
    assert load_design(session, user.id, "course") == (changed, 2)


def test_saving_over_a_newer_version_is_a_conflict(session):
    user = User(role=Role.learner)
    session.add(user)
    session.flush()
    save_design(session, user.id, "course", Design(), expected_version=0)
    with pytest.raises(Conflict, match="version 1, this page had 0"):
        save_design(session, user.id, "course", Design(name="late"), expected_version=0)


def test_a_save_is_undone_with_the_rest_of_its_transaction(database_url):
    """The design is written in the caller's transaction: rolled back with it, never committed
    on its own (SQLite's driver committed a savepoint released before any other write)."""
    upgrade(database_url)
    factory = make_sessionmaker(make_engine(database_url))
    with factory() as first:
        user = User(role=Role.learner)
        first.add(user)
        first.flush()
        save_design(first, user.id, "course", Design(name="kept"), expected_version=0)
        first.commit()
        user_id = user.id
    for expected_version, name in ((1, "undone"), (0, "other course")):
        course = "course" if expected_version else "other"
        with factory() as second:
            save_design(second, user_id, course, Design(name=name), expected_version)
            second.rollback()
    with factory() as third:
        assert load_design(third, user_id, "course") == (Design(name="kept"), 1)
        assert load_design(third, user_id, "other") == (Design(), 0)
