"""Fixtures shared by the app, web and browser tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.settings import Settings
from tests.factories import write_course

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def course_dir(tmp_path: Path) -> Path:
    """A valid three-step fixture course (tests/factories.py), safe to break per test."""
    return write_course(tmp_path / "course")


@pytest.fixture
def make_settings(tmp_path: Path):
    """Build test Settings: a fresh SQLite file per test, the repository's steps/ by default."""

    def build(**overrides: object) -> Settings:
        values: dict[str, object] = {
            "env": "test",
            "secret_key": "test-secret-key-not-for-production",
            "database_url": f"sqlite:///{tmp_path / 'var' / 'test.sqlite3'}",
            "steps_dir": REPO / "steps",
        }
        values.update(overrides)
        return Settings(_env_file=None, **values)  # type: ignore[arg-type]

    return build


@pytest.fixture
def make_client(make_settings):
    """Start the app (lifespan included: migrations run) with Settings overrides; yields a
    function returning a TestClient. Clients are closed at the end of the test."""
    from fastapi.testclient import TestClient

    from app.main import create_app

    clients: list[TestClient] = []

    def build(**overrides: object) -> TestClient:
        client = TestClient(create_app(make_settings(**overrides)))
        client.__enter__()
        clients.append(client)
        return client

    yield build
    for client in clients:
        client.__exit__(None, None, None)


@pytest.fixture
def client(make_client):
    """A client of the app serving the repository's steps/."""
    return make_client()


@pytest.fixture
def course_client(make_client, course_dir):
    """A client of the app serving the three-step fixture course."""
    return make_client(steps_dir=course_dir)
