"""Accounts: passwords are stored as argon2id hashes and an email is taken once."""

import pytest
from sqlalchemy import select

from app.accounts import (
    authenticate,
    change_password,
    create_user,
    hash_password,
    remove_account,
    verify_password,
)
from app.db import make_engine, make_sessionmaker, upgrade
from app.errors import Conflict, NotFound
from app.models import DesignRecord, Role, User


@pytest.fixture
def session(database_url):
    url = database_url
    upgrade(url)
    with make_sessionmaker(make_engine(url))() as s:
        yield s


def test_hash_is_argon2id_and_verifies_only_the_same_password():
    stored = hash_password("correct horse battery")
    assert stored.startswith("$argon2id$")
    assert verify_password(stored, "correct horse battery")
    assert not verify_password(stored, "correct horse batterY")
    assert not verify_password(None, "anything")


def test_create_user_then_authenticate_case_insensitive_email(session):
    user = create_user(session, " Ana@Example.com", Role.instructor, "long enough pw")
    assert user.email == "ana@example.com" and user.role is Role.instructor
    assert authenticate(session, "ANA@example.com", "long enough pw") is user
    assert authenticate(session, "ana@example.com", "wrong password") is None


def test_an_email_is_taken_once(session):
    create_user(session, "bo@example.com", Role.learner, "long enough pw")
    with pytest.raises(Conflict):
        create_user(session, "BO@example.com", Role.learner, "another long pw")


def test_short_password_is_refused(session):
    with pytest.raises(ValueError, match="at least 10"):
        create_user(session, "cy@example.com", Role.learner, "short")


def test_a_new_password_replaces_the_old_and_raises_the_session_generation(session):
    user = create_user(session, "dee@example.com", Role.learner, "the first password")
    before = user.session_generation
    change_password(session, "DEE@example.com", "the second password")
    assert user.session_generation == before + 1
    assert authenticate(session, "dee@example.com", "the second password") is user
    assert authenticate(session, "dee@example.com", "the first password") is None
    with pytest.raises(ValueError, match="at least 10"):
        change_password(session, "dee@example.com", "short")
    with pytest.raises(NotFound):
        change_password(session, "nobody@example.com", "a long password")


def test_removing_an_account_deletes_it_with_its_work(session):
    user = create_user(session, "flo@example.com", Role.learner, "a long password")
    session.add(DesignRecord(user_id=user.id, course_id="c", yaml_text="version: 1\n"))
    session.commit()
    remove_account(session, "flo@example.com")
    session.commit()
    assert session.scalar(select(User).where(User.email == "flo@example.com")) is None
    assert session.scalars(select(DesignRecord)).all() == []
    with pytest.raises(NotFound):
        remove_account(session, "flo@example.com")
