"""Migrations build the schema the models describe; the design version is an optimistic lock."""

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, select
from sqlalchemy.orm.exc import StaleDataError

from app.db import alembic_config, database_status, make_engine, make_sessionmaker, upgrade
from app.models import Base, DesignRecord, Role, User


@pytest.fixture
def db_url(database_url):
    url = database_url
    upgrade(url)
    return url


def test_upgrade_head_creates_every_table(db_url):
    tables = set(inspect(make_engine(db_url)).get_table_names())
    assert {
        "users",
        "designs",
        "step_progress",
        "sim_results",
        "check_outcomes",
        "alembic_version",
    } <= tables


def test_migrations_match_the_models(db_url):
    with make_engine(db_url).connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert diff == []


def test_upgrade_twice_is_a_no_op(db_url):
    upgrade(db_url)
    head = ScriptDirectory.from_config(alembic_config(db_url)).get_current_head()
    assert database_status(make_engine(db_url)) == {"status": "ok", "revision": head}


def test_status_reports_an_unmigrated_database_as_error(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'empty.sqlite3'}")
    assert database_status(engine)["status"] == "error"


def test_a_stale_design_version_is_refused(db_url):
    """Two requests load version 1; the second to save must fail, not overwrite the first."""
    factory = make_sessionmaker(make_engine(db_url))
    with factory.begin() as s:
        user = User(email="a@example.com", role=Role.learner)
        s.add(user)
        s.flush()
        s.add(DesignRecord(user_id=user.id, course_id="c", yaml_text="version: 1\n"))
    first, second = factory(), factory()
    a = first.scalars(select(DesignRecord)).one()
    b = second.scalars(select(DesignRecord)).one()
    assert a.version == b.version == 1
    a.yaml_text = "version: 1\nname: first\n"
    first.commit()
    b.yaml_text = "version: 1\nname: second\n"
    with pytest.raises(StaleDataError):
        second.commit()
    with factory() as s:
        saved = s.scalars(select(DesignRecord)).one()
        assert (saved.version, saved.yaml_text) == (2, "version: 1\nname: first\n")


def test_existing_emails_are_put_in_normal_form_unless_another_account_has_it(database_url):
    from alembic import command
    from sqlalchemy import text

    upgrade(database_url)  # PostgreSQL test databases start at head: step back to before 0004
    command.downgrade(alembic_config(database_url), "0003_session_generation")
    engine = make_engine(database_url)
    stored = ["Jose\u0301@Example.com", "bo@example.com", "BO@Example.com ", "x@XN--EXMPLE-CUA.COM"]
    with engine.begin() as conn:
        for email in stored:
            conn.execute(
                text("INSERT INTO users (email, role, created_at, session_generation) "
                     "VALUES (:email, 'learner', CURRENT_TIMESTAMP, 0)"),
                {"email": email},
            )  # fmt: skip
    upgrade(database_url)
    with make_sessionmaker(engine)() as session:
        emails = list(session.scalars(select(User.email).order_by(User.id)))
    assert emails == [
        "jos\u00e9@example.com", "bo@example.com", "BO@Example.com ", "x@ex\u00e4mple.com"
    ]  # fmt: skip
