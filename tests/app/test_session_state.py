"""Sessions are revocable on the server: signing out, a new password and an account's removal
end every copy of the session cookie; idle and absolute lifetimes end it too."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app import session_state
from app.accounts import change_password, remove_account
from app.db import make_engine, make_sessionmaker, session_scope
from app.models import Role, User
from app.session_state import bind_user, forget_user, is_live, touch
from tests.instructor.second_course import SECOND_COURSE
from tests.instructor.signing_in import add_user, sign_in
from tests.web.html import csrf_of, soup

COOKIE = "designlab_session"
INSTRUCTOR_PAGES = ("/instructor", "/instructor/grades.csv")


@pytest.fixture
def signed_in(make_client, make_settings):
    """A client signed in as an instructor and a second client holding a copy of its cookie."""
    client = make_client(steps_dir=SECOND_COURSE)
    add_user(make_settings(), "ina@example.com", Role.instructor)
    sign_in(client, "ina@example.com")
    copy = TestClient(client.app, cookies={COOKIE: client.cookies[COOKIE]})
    for path in INSTRUCTOR_PAGES:
        assert copy.get(path, follow_redirects=False).status_code == 200, path
    return client, copy


def opens_instructor_pages(client: TestClient) -> list[int]:
    return [client.get(path, follow_redirects=False).status_code for path in INSTRUCTOR_PAGES]


def test_logout_ends_every_copy_of_the_session(signed_in):
    client, copy = signed_in
    token = csrf_of(soup(client.get("/instructor")))
    assert client.post("/logout", data={"csrf_token": token}, follow_redirects=False).status_code
    assert opens_instructor_pages(copy) == [303, 303]
    assert "Sign in" in soup(copy.get("/")).select_one("nav.account").get_text()


def test_a_password_change_ends_every_copy_of_the_session(signed_in, make_settings):
    client, copy = signed_in
    for session in session_scope(_factory(make_settings)):
        change_password(session, "ina@example.com", "a brand new password")
    assert opens_instructor_pages(client) == [303, 303]
    assert opens_instructor_pages(copy) == [303, 303]


def test_an_accounts_removal_ends_every_copy_of_the_session(signed_in, make_settings):
    client, copy = signed_in
    for session in session_scope(_factory(make_settings)):
        remove_account(session, "ina@example.com")
    assert opens_instructor_pages(client) == [303, 303]
    assert opens_instructor_pages(copy) == [303, 303]


def test_signing_in_again_after_logout_opens_the_pages(signed_in):
    client, _ = signed_in
    token = csrf_of(soup(client.get("/instructor")))
    client.post("/logout", data={"csrf_token": token})
    sign_in(client, "ina@example.com")
    assert opens_instructor_pages(client) == [200, 200]


def _factory(make_settings):
    return make_sessionmaker(make_engine(make_settings().database_url))


def _user(generation: int = 0) -> User:
    return User(id=7, email="ina@example.com", role=Role.instructor, session_generation=generation)


def test_a_session_is_live_until_its_idle_lifetime_passes(make_settings):
    settings = make_settings(session_idle_minutes=30, session_max_age_hours=24)
    state: dict[str, object] = {}
    bind_user(state, _user(), at_s=1_000_000)
    assert is_live(state, _user(), settings, 1_000_000 + 30 * 60 - 1)
    assert not is_live(state, _user(), settings, 1_000_000 + 30 * 60)
    touch(state, 1_000_000 + 29 * 60)
    assert is_live(state, _user(), settings, 1_000_000 + 58 * 60)


def test_a_session_ends_at_its_absolute_lifetime_however_active(make_settings):
    settings = make_settings(session_idle_minutes=30, session_max_age_hours=2)
    state: dict[str, object] = {}
    bind_user(state, _user(), at_s=0)
    for minute in range(0, 120, 20):
        touch(state, minute * 60)
        assert is_live(state, _user(), settings, minute * 60 + 1)
    touch(state, 2 * 3600 - 60)
    assert not is_live(state, _user(), settings, 2 * 3600)


def test_a_session_of_an_earlier_generation_or_without_one_is_not_live(make_settings):
    settings = make_settings()
    state: dict[str, object] = {}
    bind_user(state, _user(generation=3), at_s=100)
    assert is_live(state, _user(generation=3), settings, 200)
    assert not is_live(state, _user(generation=4), settings, 200)
    assert not is_live(state, None, settings, 200)
    assert not is_live({"user_id": 7}, _user(), settings, 200)  # a cookie from before
    forget_user(state)
    assert state == {}


def test_an_idle_session_is_signed_out_by_the_app(make_client, make_settings, monkeypatch):
    client = make_client(steps_dir=SECOND_COURSE, session_idle_minutes=5)
    add_user(make_settings(), "ina@example.com", Role.instructor)
    sign_in(client, "ina@example.com")
    assert opens_instructor_pages(client) == [200, 200]
    later = session_state.now_s() + 5 * 60
    monkeypatch.setattr(session_state, "now_s", lambda: later)
    assert opens_instructor_pages(client) == [303, 303]


def test_a_guests_session_has_no_idle_or_absolute_limit_but_can_be_ended(make_settings):
    """A guest has no password to sign in again with: only the cookie's own expiry (refreshed on
    each visit) or a new generation ends its session."""
    settings = make_settings(session_idle_minutes=30, session_max_age_hours=2)
    guest = User(id=8, email=None, role=Role.learner, session_generation=0)
    state: dict[str, object] = {}
    bind_user(state, guest, at_s=0)
    assert state["guest"] is True
    assert is_live(state, guest, settings, 30 * 24 * 3600)
    guest.session_generation = 1
    assert not is_live(state, guest, settings, 60)


def test_a_guest_that_signed_up_gets_the_accounts_limits(make_settings):
    settings = make_settings(session_idle_minutes=30)
    user = User(id=8, email=None, role=Role.learner, session_generation=0)
    state: dict[str, object] = {}
    bind_user(state, user, at_s=0)
    user.email = "ana@example.com"
    assert not is_live(state, user, settings, 31 * 60)  # the guest flag alone is not enough
