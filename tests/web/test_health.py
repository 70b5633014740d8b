"""/healthz reports the database, the simulator version and the course."""

from __future__ import annotations

from alembic.script import ScriptDirectory

from app.db import alembic_config
from simulator import SIMULATOR_VERSION


def test_healthz_reports_a_migrated_database(course_client):
    response = course_client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    head = ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head()
    assert body["database"] == {"status": "ok", "revision": head}
    assert body["simulator_version"] == SIMULATOR_VERSION
    assert body["course"] == {"status": "ok", "steps": 3, "unavailable_steps": [], "errors": 0}


def test_healthz_is_503_when_the_database_is_gone(course_client):
    course_client.app.state.engine.dispose()
    with course_client.app.state.engine.begin() as conn:
        conn.exec_driver_sql("DROP TABLE alembic_version")
    response = course_client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["database"]["status"] == "error"
