"""Accounts: passwords are stored as argon2id hashes and an email is taken once."""

import pytest
from sqlalchemy import select

from app.accounts import (
    authenticate,
    change_password,
    create_user,
    hash_password,
    normalise_email,
    remove_account,
    valid_email,
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


@pytest.mark.parametrize(
    "email",
    [
        "@evil",
        "a@evil",
        "ana",
        "ana@",
        "a b@example.com",
        "ana@example..com",
        "a\x00b@example.com",
        "=cmd|' /C calc'!A0",
        "ana@localhost",
    ],
)
def test_an_email_that_is_not_an_address_is_refused(email):
    with pytest.raises(ValueError, match="not an email address"):
        valid_email(email)


def test_emails_are_normalised_nfkc_with_the_domain_case_folded():
    assert valid_email(" Ana@EXAMPLE.com ") == "ana@example.com"
    assert valid_email("jos\u00e9@example.com") == valid_email("jose\u0301@example.com")
    assert valid_email("\uff41na@example.com") == "ana@example.com"  # full-width a, NFKC
    assert valid_email("x@XN--EXMPLE-CUA.COM") == "x@ex\u00e4mple.com"
    assert normalise_email("Jose\u0301@X.org") == "jos\u00e9@x.org"


def test_jose_precomposed_and_decomposed_are_one_account(session):
    user = create_user(session, "jos\u00e9@example.com", Role.learner, "long enough pw")
    with pytest.raises(Conflict):
        create_user(session, "jose\u0301@example.com", Role.learner, "long enough pw")
    assert authenticate(session, "JOSE\u0301@example.com", "long enough pw") is user


def test_an_account_stored_before_validation_still_signs_in(session):
    session.add(User(email="legacy@box", role=Role.learner, password_hash=hash_password("p" * 12)))
    session.flush()
    assert authenticate(session, "Legacy@Box", "p" * 12) is not None
