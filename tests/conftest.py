"""Fixtures shared by the app, web and browser tests."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.settings import Settings
from tests.databases import PostgresDatabases, backend_params, postgres_url
from tests.factories import write_course

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _sim_warm_pool_restored() -> Iterator[None]:
    """``designlab serve`` sets SIM_WARM_POOL in the process's environment for the app it runs;
    a test that invokes it in process (even one that stops at a settings error) must not leave
    every later test's app warming a pool of its own."""
    before = os.environ.get("SIM_WARM_POOL")
    yield
    if before is None:
        os.environ.pop("SIM_WARM_POOL", None)
    else:
        os.environ["SIM_WARM_POOL"] = before


@pytest.fixture
def course_dir(tmp_path: Path) -> Path:
    """A valid three-step fixture course (tests/factories.py), safe to break per test."""
    return write_course(tmp_path / "course")


@pytest.fixture(scope="session")
def postgres_databases() -> Iterator[PostgresDatabases]:
    """Per-test PostgreSQL databases on the server at DATABASE_URL_TEST (tests/databases.py)."""
    url = postgres_url()
    if url is None:
        pytest.skip("DATABASE_URL_TEST is not set")
    databases = PostgresDatabases(url)
    yield databases
    databases.close()


@pytest.fixture(params=backend_params())
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh database per test: a SQLite file (not yet created), and, when DATABASE_URL_TEST is
    set, also a PostgreSQL database at migration head. Run ``app.db.upgrade(url)`` before use."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'var' / 'test.sqlite3'}"
        return
    databases: PostgresDatabases = request.getfixturevalue("postgres_databases")
    url = databases.create()
    yield url
    databases.drop(url)


@pytest.fixture
def make_settings(tmp_path: Path, database_url: str):
    """Build test Settings: a fresh database per test (SQLite, and PostgreSQL when configured),
    the repository's steps/ by default."""

    def build(**overrides: object) -> Settings:
        values: dict[str, object] = {
            "env": "test",
            "secret_key": "test-secret-key-not-for-production",
            "database_url": database_url,
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
