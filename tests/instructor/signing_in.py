"""Accounts and sign-in for the instructor web tests."""

from __future__ import annotations

from sqlalchemy.orm import Session

from app.accounts import create_user
from app.db import make_engine, make_sessionmaker, session_scope
from app.models import Role
from app.settings import Settings
from tests.web.html import csrf_of, soup

PASSWORD = "a long password"


def in_session(settings: Settings) -> Session:
    """A session on the app's database (the caller closes it; commit what you add)."""
    return make_sessionmaker(make_engine(settings.database_url))()


def add_user(settings: Settings, email: str, role: Role) -> int:
    """Create an account with PASSWORD in the app's database; returns its id."""
    for session in session_scope(make_sessionmaker(make_engine(settings.database_url))):
        user_id = create_user(session, email, role, PASSWORD).id
    return user_id


def sign_in(client, email: str) -> None:
    """Sign ``client`` in as ``email`` through the sign-in form."""
    token = csrf_of(soup(client.get("/login")))
    response = client.post(
        "/login",
        data={"csrf_token": token, "email": email, "password": PASSWORD},
        follow_redirects=False,
    )
    assert response.status_code == 303, response.text
