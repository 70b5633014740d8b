"""Logs are JSON lines carrying the request id of the request that wrote them, from async and
sync routes and from the unexpected-error handler alike."""

from __future__ import annotations

import io
import json
import logging

import pytest
from fastapi.testclient import TestClient

from app.logs import RequestIdFilter, configure_logging, json_formatter
from app.main import create_app

log = logging.getLogger("designlab.test")


@pytest.fixture
def lines():
    """Every record logged during the test, as parsed JSON lines in the app's format."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(json_formatter())
    handler.addFilter(RequestIdFilter())
    root = logging.getLogger()
    root.addHandler(handler)
    yield lambda: [json.loads(line) for line in stream.getvalue().splitlines()]
    root.removeHandler(handler)


@pytest.fixture
def app_with_logging_routes(make_settings):
    app = create_app(make_settings())

    async def async_route() -> dict[str, str]:
        log.warning("from an async route", extra={"figure": 42})
        return {}

    def sync_route() -> dict[str, str]:
        log.warning("from a sync route")
        return {}

    def failing_route() -> dict[str, str]:
        raise RuntimeError("boom")

    app.add_api_route("/test/async", async_route)
    app.add_api_route("/test/sync", sync_route)
    app.add_api_route("/test/fail", failing_route)
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


@pytest.mark.parametrize("path", ["/test/async", "/test/sync"])
def test_a_line_written_in_a_route_carries_the_request_id(app_with_logging_routes, lines, path):
    response = app_with_logging_routes.get(path, headers={"X-Request-ID": "req-42"})
    assert response.status_code == 200
    mine = [line for line in lines() if line["logger"] == "designlab.test"]
    assert len(mine) == 1
    assert mine[0]["request_id"] == "req-42"
    assert mine[0]["level"] == "WARNING"
    assert mine[0]["message"].startswith("from a")


def test_extra_fields_become_json_fields(app_with_logging_routes, lines):
    app_with_logging_routes.get("/test/async")
    (line,) = [line for line in lines() if line["logger"] == "designlab.test"]
    assert line["figure"] == 42


def test_each_request_gets_one_access_line_without_the_query(app_with_logging_routes, lines):
    app_with_logging_routes.get("/healthz?token=secret-value", headers={"X-Request-ID": "a-1"})
    access = [line for line in lines() if line["logger"] == "designlab.access"]
    assert len(access) == 1
    assert access[0]["request_id"] == "a-1"
    assert (access[0]["method"], access[0]["path"], access[0]["status"]) == ("GET", "/healthz", 200)
    assert access[0]["duration_ms"] >= 0
    server_side = [line for line in lines() if not line["logger"].startswith("httpx")]
    assert "secret-value" not in json.dumps(server_side)


def test_an_unexpected_error_is_logged_with_the_request_id_and_answered_500(
    app_with_logging_routes, lines
):
    response = app_with_logging_routes.get("/test/fail", headers={"X-Request-ID": "err-1"})
    assert response.status_code == 500
    assert response.headers["x-request-id"] == "err-1"
    errors = [line for line in lines() if line["level"] == "ERROR"]
    assert errors and all(line["request_id"] == "err-1" for line in errors)
    assert "RuntimeError: boom" in errors[0]["exc_info"]


def test_configuring_twice_keeps_one_handler():
    first = configure_logging("INFO")
    second = configure_logging("WARNING")
    assert first is second
    assert logging.getLogger().handlers.count(first) == 1
    assert logging.getLogger("uvicorn.access").disabled
    configure_logging("INFO")
