"""Schemathesis against the app's OpenAPI document, in process (ASGI): for generated requests,
valid and invalid, every operation answers without a 5xx, and every 4xx of the JSON API is the
app's JSON error saying what was wrong (the field, the parameter, or the media type). The HTML
routes listed in the document answer errors as pages; for them the rule is only: no 5xx.

The app serves a small course (the grading fixture plus a one-minute ``peak`` scenario), so a
valid design grades in milliseconds; half the simulate requests name ``peak`` so simulations run.
Generated examples per operation are bounded (MAX_EXAMPLES); schemathesis adds its explicit
coverage cases (boundaries, wrong types, other methods) on top: about 3,500 requests in all, two
minutes on two cores.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings

from app.main import create_app
from app.settings import Settings

FIXTURE = Path(__file__).resolve().parents[1] / "grading" / "fixtures" / "course"
MAX_EXAMPLES = 60
SHORT_PEAK = """\
version: 1
name: peak
duration_seconds: 60
seed: 7
load:
  runs_per_second: 0.5
"""


def build_app():  # type: ignore[no-untyped-def]
    """The app on a copy of the fixture course with a short ``peak`` scenario, and SQLite."""
    root = Path(tempfile.mkdtemp(prefix="designlab-openapi-"))
    course = shutil.copytree(FIXTURE, root / "course")
    (course / "scenarios").mkdir(exist_ok=True)
    (course / "scenarios" / "peak.yaml").write_text(SHORT_PEAK)
    settings_ = Settings(
        _env_file=None,
        env="test",
        secret_key="openapi-fuzz-secret-key",
        database_url=f"sqlite:///{root / 'fuzz.sqlite3'}",
        steps_dir=course,
        rate_limit_grade="100000/minute",
        rate_limit_simulate="100000/minute",
        sim_timeout_seconds=20,
    )
    return create_app(settings_), root


APP, ROOT = build_app()
schema = schemathesis.openapi.from_asgi("/api/openapi.json", APP)


@schema.hook
def map_query(context: Any, query: dict[str, Any] | None) -> dict[str, Any] | None:
    """Half the simulate requests name the course's scenario, so simulations run too."""
    if query and "scenario" in query and len(str(query["scenario"])) % 2 == 0:
        return {**query, "scenario": "peak"}
    return query


@pytest.fixture(scope="module", autouse=True)
def running_app():
    """The app's lifespan (migrations, course load) around the module's tests."""
    with TestClient(APP):
        yield
    shutil.rmtree(ROOT, ignore_errors=True)


def error_of(response: Any) -> tuple[str, list[str]]:
    """The error's message and the fields it names, from either JSON error shape."""
    body = response.json()
    if "error" in body:
        error = body["error"]
        return error["detail"], [f["field"] for f in error.get("fields", [])]
    assert body.get("status") == "error", body
    return body["message"], [e["field"] for e in body.get("errors", [])]


def assert_clear_client_error(case: Any, response: Any) -> None:
    """A 4xx is JSON and says what was wrong, in the terms of the request."""
    content_type = response.headers.get("content-type", [""])[0]
    assert content_type.startswith("application/json"), response.text[:200]
    message, fields = error_of(response)
    assert message
    if response.status_code == 422:
        assert fields, f"422 without a field: {message}"
    elif response.status_code == 404:
        assert "scenario" in message.lower()
    elif response.status_code == 415:
        assert "application/json" in message


@pytest.mark.slow
@schema.parametrize()
@settings(max_examples=MAX_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_server_error_and_every_client_error_names_what_was_wrong(case):
    response = case.call()
    assert response.status_code < 500, f"{case.method} {case.path}: {response.text[:500]}"
    if response.status_code >= 400 and case.path.startswith("/api/"):
        assert_clear_client_error(case, response)
