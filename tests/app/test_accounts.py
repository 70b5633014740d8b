"""Accounts: passwords are stored as argon2id hashes and an email is taken once."""

import pytest

from app.accounts import authenticate, create_user, hash_password, verify_password
from app.db import make_engine, make_sessionmaker, upgrade
from app.errors import Conflict
from app.models import Role


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
