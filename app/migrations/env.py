"""Alembic environment: migrates the database at the URL Alembic is given, else DATABASE_URL."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection, engine_from_config, pool, text

from app.models import Base
from app.settings import get_settings

config = context.config
LOCK_KEY = 0x64657369676E6C  # "designl": the PostgreSQL advisory lock held while migrating
target_metadata = Base.metadata


def _url() -> str:
    return config.get_main_option("sqlalchemy.url") or get_settings().database_url


def _configure(connection: Connection | None = None) -> None:
    batch = _url().startswith("sqlite")  # SQLite alters tables by copying them
    if connection is None:
        context.configure(
            url=_url(), literal_binds=True, target_metadata=target_metadata, render_as_batch=batch
        )
    else:
        context.configure(
            connection=connection, target_metadata=target_metadata, render_as_batch=batch
        )


def run_offline() -> None:
    """Emit SQL to stdout without a database connection (``alembic upgrade --sql``)."""
    _configure()
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    """Connect and apply the migrations."""
    connectable = engine_from_config(
        {"sqlalchemy.url": _url()}, prefix="sqlalchemy.", poolclass=pool.NullPool
    )
    with connectable.connect() as connection:
        _configure(connection)
        with context.begin_transaction():
            if connection.dialect.name == "postgresql":
                # Instances starting together migrate one at a time: the others wait here until
                # the first commits, then find the schema at head.
                connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": LOCK_KEY})
            context.run_migrations()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
