"""Database engine, sessions and migrations (SQLite by default, PostgreSQL via DATABASE_URL)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.sql.dml import Insert

MIGRATIONS_DIR = Path(__file__).parent / "migrations"


def _ensure_sqlite_dir(url: str) -> None:
    """Create the folder of a SQLite file (``var/`` by default) so the first start just works."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)


SQLITE_BUSY_TIMEOUT_MS = 30_000
"""How long a SQLite writer waits for another writer's lock before failing, in ms. Writes hold
the lock for milliseconds, but on a loaded 2-core machine a lock holder can wait its turn for
the CPU behind dozens of request threads; a save that waits is better than one answered 500."""


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    """Foreign keys on; wait for a writer instead of failing; write-ahead log.

    WAL with synchronous=NORMAL keeps every committed transaction through a crash of the process
    (the case the crash test covers); only a power loss can drop the last few. It saves an fsync
    per commit, which is most of a cached step run's time.
    """
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


POOL_SIZE = 10
"""Connections an engine keeps open. More are opened when needed and closed when returned
(``max_overflow=-1``): a request never waits for a pooled connection, because the waiting would
block the event loop in an async route while the requests holding connections need that loop to
finish (a deadlock until the pool's timeout)."""


def make_engine(url: str) -> Engine:
    """An Engine for ``url`` (a pool that never makes a request wait, see POOL_SIZE); SQLite gets
    foreign keys on and a busy timeout (SQLITE_BUSY_TIMEOUT_MS)."""
    _ensure_sqlite_dir(url)
    pool = {"pool_size": POOL_SIZE, "max_overflow": -1}
    if make_url(url).get_backend_name() == "sqlite":
        engine = create_engine(url, connect_args={"check_same_thread": False}, **pool)
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return create_engine(url, pool_pre_ping=True, **pool)


def make_sessionmaker(engine: Engine) -> sessionmaker[Session]:
    """A session factory bound to ``engine`` (objects stay readable after commit)."""
    return sessionmaker(bind=engine, expire_on_commit=False)


def session_scope(factory: sessionmaker[Session]) -> Iterator[Session]:
    """Yield a session; commit when the caller finishes cleanly, roll back on an exception."""
    with factory() as session:
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise


def insert_unless_exists(session: Session, model: Any, **values: Any) -> bool:
    """``INSERT ... ON CONFLICT DO NOTHING`` of one ``model`` row, in the session's transaction.

    Returns True when the row was inserted, False when a row with the same unique key exists (a
    race lost to another request). Unlike a savepoint, it never ends the transaction early:
    Python's sqlite3 driver starts no transaction for a SAVEPOINT issued before any write, so
    releasing it committed everything up to it on its own. Raises ValueError for a database
    other than SQLite or PostgreSQL.
    """
    dialect = session.get_bind().dialect.name
    insert: Any
    if dialect == "sqlite":
        insert = sqlite.insert
    elif dialect == "postgresql":
        insert = postgresql.insert
    else:
        raise ValueError(f"no INSERT ... ON CONFLICT DO NOTHING for {dialect}")
    table = model.__table__
    statement: Insert = insert(table).values(**values).on_conflict_do_nothing()
    # RETURNING tells whether a row went in (psycopg reports no rowcount for this statement).
    returned = session.execute(statement.returning(*table.primary_key.columns)).first()
    return returned is not None


def alembic_config(url: str) -> Config:
    """Alembic configuration for app/migrations pointing at ``url`` (no alembic.ini needed)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def upgrade(url: str) -> None:
    """Apply every migration up to head on the database at ``url`` (idempotent)."""
    _ensure_sqlite_dir(url)
    command.upgrade(alembic_config(url), "head")


def database_status(engine: Engine) -> dict[str, str]:
    """For /healthz: ``{"status": "ok", "revision": R}`` or ``{"status": "error", "error": E}``."""
    try:
        with engine.connect() as conn:
            revision = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
    except Exception as exc:  # any driver error means the database is not usable
        return {"status": "error", "error": type(exc).__name__}
    return {"status": "ok", "revision": str(revision)}
