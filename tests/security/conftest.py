"""A module-wide app for the security tests, with accounts of each role and clients signed in.

Authorization and CSRF do not depend on the database engine, so one SQLite app serves a whole
module (the persistence tests run on PostgreSQL too). Sign-in is not rate limited here: the tests
sign in once per request they make.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fastapi.routing import iter_route_contexts
from fastapi.testclient import TestClient

from app.accounts import create_user
from app.db import session_scope
from app.main import create_app
from app.models import Role
from app.settings import Settings
from tests.web.html import csrf_of, soup

REPO = Path(__file__).resolve().parents[2]
PASSWORD = "correct horse battery staple"
ROLES = ("anonymous", "guest", "learner", "instructor")
"""Who asks: nobody, a guest learner (no account, made by saving a decision), a learner with an
account, an instructor."""


def security_settings(root: Path, **overrides: object) -> Settings:
    values: dict[str, object] = {
        "env": "test",
        "secret_key": "security-tests-secret-key-0123456789",
        "database_url": f"sqlite:///{root / 'security.sqlite3'}",
        "steps_dir": REPO / "steps",
        "rate_limit_sign_in": "100000/minute",
        "rate_limit_grade": "100000/minute",
        "rate_limit_simulate": "100000/minute",
    }
    values.update(overrides)
    return Settings(_env_file=None, **values)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """The app, started, with learner@example.com and teacher@example.com (PASSWORD)."""
    application = create_app(security_settings(tmp_path_factory.mktemp("security")))
    with TestClient(application):
        for session in session_scope(application.state.sessionmaker):
            create_user(session, "learner@example.com", Role.learner, PASSWORD)
            create_user(session, "teacher@example.com", Role.instructor, PASSWORD)
        yield application


@pytest.fixture
def client_as(app) -> Callable[[str], TestClient]:
    """A new browser session as ``role`` (one of ROLES); its CSRF token is ``client.csrf``."""
    clients: list[TestClient] = []

    def make(role: str) -> TestClient:
        client = TestClient(app, follow_redirects=False)
        clients.append(client)
        client.csrf = csrf_of(soup(client.get("/login")))  # type: ignore[attr-defined]
        if role == "guest":
            page = client.get("/steps/run-api")
            form = {"csrf_token": client.csrf, "design_version": "0"}  # type: ignore[attr-defined]
            saved = client.post("/steps/run-api", data=form)
            assert saved.status_code in (200, 303), page.text[:300]
        elif role in ("learner", "instructor"):
            email = "learner@example.com" if role == "learner" else "teacher@example.com"
            form = {"csrf_token": client.csrf, "email": email, "password": PASSWORD}  # type: ignore[attr-defined]
            assert client.post("/login", data=form).status_code == 303
            client.csrf = csrf_of(soup(client.get("/login")))  # type: ignore[attr-defined]
        return client

    yield make
    for client in clients:
        client.close()


def route_table(app) -> list[tuple[str, str, str]]:
    """(method, path template, route name) of every route the app serves (HEAD left out)."""
    return sorted(
        (method, context.path, context.name)
        for context in iter_route_contexts(app.routes)
        for method in (context.methods or ())
        if method != "HEAD"
    )
