"""Test databases: a fresh SQLite file per test, and, when ``DATABASE_URL_TEST`` points at a
PostgreSQL server, a fresh PostgreSQL database per test cloned from a template migrated once.

``DATABASE_URL_TEST`` is a SQLAlchemy URL of a database the role can connect to and whose role
may create databases (``scripts/ci-postgres.sh start`` prints one), for example
``postgresql+psycopg://designlab:secret@127.0.0.1:5432/designlab``.
"""

from __future__ import annotations

import os
import time
import uuid

import pytest
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import DBAPIError

from app.db import upgrade

DROP_ATTEMPTS = 10
"""Tries of a database drop (see :meth:`PostgresDatabases._drop`)."""

POSTGRES_ENV = "DATABASE_URL_TEST"


def postgres_url() -> str | None:
    """The PostgreSQL server for the tests, or None when ``DATABASE_URL_TEST`` is unset."""
    return os.environ.get(POSTGRES_ENV) or None


def backend_params() -> list[object]:
    """Parameters for a database fixture: ``sqlite`` always, ``postgres`` (marked ``postgres``)
    when a server is configured, so the same tests run on both."""
    params: list[object] = ["sqlite"]
    if postgres_url():
        params.append(pytest.param("postgres", marks=pytest.mark.postgres))
    return params


class PostgresDatabases:
    """Creates and drops per-test databases on the server at ``admin_url``.

    The first :meth:`create` migrates a template database to head; every database after that is
    ``CREATE DATABASE ... TEMPLATE`` of it (a file copy, much faster than running migrations).
    """

    def __init__(self, admin_url: str):
        self.admin_url = make_url(admin_url)
        self._engine: Engine | None = None
        self._template: str | None = None

    def _admin(self) -> Engine:
        if self._engine is None:
            self._engine = create_engine(self.admin_url, isolation_level="AUTOCOMMIT")
        return self._engine

    def url_of(self, name: str) -> URL:
        """The URL of database ``name`` on the same server, as the same role."""
        return self.admin_url.set(database=name)

    def _execute(self, sql: str) -> None:
        with self._admin().connect() as conn:
            conn.execute(text(sql))

    def template(self) -> str:
        """The migrated template's name (created on first use)."""
        if self._template is None:
            name = f"designlab_template_{os.getpid()}_{uuid.uuid4().hex[:6]}"
            self._execute(f'CREATE DATABASE "{name}"')
            upgrade(self.url_of(name).render_as_string(hide_password=False))
            self._template = name
        return self._template

    def create(self, migrated: bool = True) -> str:
        """A new database, at migration head or (``migrated=False``) empty; returns its URL
        (password included)."""
        name = f"designlab_test_{uuid.uuid4().hex[:12]}"
        source = self.template() if migrated else "template1"
        self._execute(f'CREATE DATABASE "{name}" TEMPLATE "{source}"')
        return self.url_of(name).render_as_string(hide_password=False)

    def drop(self, url: str) -> None:
        """Drop the database at ``url``, closing any connection still open to it."""
        self._drop(make_url(url).database or "")

    def _drop(self, name: str) -> None:
        """``DROP DATABASE ... WITH (FORCE)``, tried again while a process the test role may not
        end is on the database (an autovacuum worker of a server the tests did not start: FORCE
        then fails with InsufficientPrivilege); such a worker leaves within moments."""
        for attempt in range(DROP_ATTEMPTS):
            try:
                self._execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
                return
            except DBAPIError:
                if attempt == DROP_ATTEMPTS - 1:
                    raise
                time.sleep(0.2 * (attempt + 1))

    def close(self) -> None:
        """Drop the template and close the admin connection pool."""
        if self._template is not None:
            self._drop(self._template)
            self._template = None
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None
