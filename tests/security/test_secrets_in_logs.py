"""Passwords and secrets never reach the log: signing up, signing in (right and wrong password),
creating a user from the command line, in process and in a real server's JSON log."""

from __future__ import annotations

import io
import logging

import httpx
from typer.testing import CliRunner

from app.cli import main as cli
from app.logs import RequestIdFilter, json_formatter
from tests.live_server import LiveServer
from tests.web.html import csrf_of, soup

SIGN_UP_PASSWORD = "sign-up-password-8c1f"
WRONG_PASSWORD = "wrong-password-2b7d"
CLI_PASSWORD = "cli-password-5e9a"


def captured_logs(run) -> str:
    """Everything logged at DEBUG and above while ``run()`` runs, as the app's JSON lines."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(json_formatter())
    handler.addFilter(RequestIdFilter())
    handler.setLevel(logging.DEBUG)
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        run()
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    return stream.getvalue()


def sign_up_and_in(client) -> list[str]:
    """Sign up, out, in with a wrong and the right password; returns the session's secrets."""
    token = csrf_of(soup(client.get("/signup")))
    form = {"csrf_token": token, "email": "ana@example.com", "password": SIGN_UP_PASSWORD}
    assert client.post("/signup", data=form, follow_redirects=False).status_code == 303
    token = csrf_of(soup(client.get("/")))
    client.post("/logout", data={"csrf_token": token})
    token = csrf_of(soup(client.get("/login")))
    form = {"csrf_token": token, "email": "ana@example.com", "password": WRONG_PASSWORD}
    assert client.post("/login", data=form).status_code == 401
    form["password"] = SIGN_UP_PASSWORD
    assert client.post("/login", data=form, follow_redirects=False).status_code == 303
    return [token, client.cookies["designlab_session"]]


def test_sign_up_and_sign_in_log_no_password_cookie_token_or_secret_key(make_client, make_settings):
    client = make_client()
    secrets: list[str] = []
    logged = captured_logs(lambda: secrets.extend(sign_up_and_in(client)))
    assert '"designlab.access"' in logged  # the capture works: requests were logged
    for secret in [SIGN_UP_PASSWORD, WRONG_PASSWORD, make_settings().secret_key, *secrets]:
        assert secret not in logged


def test_create_user_logs_and_prints_no_password(tmp_path, monkeypatch):
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'cli.sqlite3'}")
    monkeypatch.setenv("ENV", "development")
    from app.settings import get_settings

    get_settings.cache_clear()
    outcome = None

    def create() -> None:
        nonlocal outcome
        outcome = CliRunner().invoke(
            cli, ["create-user", "--email", "ina@example.com", "--password", CLI_PASSWORD]
        )

    try:
        logged = captured_logs(create)
    finally:
        get_settings.cache_clear()
    assert outcome is not None and outcome.exit_code == 0, outcome.output
    assert CLI_PASSWORD not in logged
    assert CLI_PASSWORD not in outcome.output


def test_a_real_servers_json_log_holds_no_password(tmp_path):
    log_path = tmp_path / "server.log"
    server = LiveServer(
        {"DATABASE_URL": f"sqlite:///{tmp_path / 'live.sqlite3'}", "LOG_LEVEL": "DEBUG"}, log_path
    ).start()
    try:
        with httpx.Client(base_url=server.url) as client:
            secrets = sign_up_and_in(client)
    finally:
        server.stop()
    logged = log_path.read_text()
    assert "POST /login 401" in logged
    for secret in [SIGN_UP_PASSWORD, WRONG_PASSWORD, server.env["SECRET_KEY"], *secrets]:
        assert secret not in logged
