"""Without SECRET_KEY, development signs sessions with a random key made once under var/ (mode
0600) and reused on every start; no key ships with the code."""

from __future__ import annotations

import stat

import pytest
from fastapi.testclient import TestClient
from itsdangerous import BadSignature, TimestampSigner

from app.development_secret import development_secret_key
from app.main import create_app, session_secret_key
from app.settings import DEVELOPMENT_SECRET_KEY_FILE, Settings


def test_make_run_without_a_secret_key_uses_a_random_key_kept_under_var(tmp_path):
    path = tmp_path / "var" / "secret_key"
    key = development_secret_key(path)
    assert len(key) == 64 and int(key, 16) >= 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert development_secret_key(path) == key  # reused across restarts
    assert development_secret_key(tmp_path / "other" / "secret_key") != key


def test_a_truncated_key_file_is_not_used(tmp_path):
    path = tmp_path / "secret_key"
    path.write_text("abc\n")
    with pytest.raises(ValueError, match="no usable key"):
        development_secret_key(path)


def test_the_development_app_signs_sessions_with_the_kept_key(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SECRET_KEY", raising=False)
    database = f"sqlite:///{tmp_path / 'var' / 'dev.sqlite3'}"
    settings = Settings(_env_file=None, env="development", database_url=database)
    assert settings.secret_key is None
    key = session_secret_key(settings)
    assert (tmp_path / DEVELOPMENT_SECRET_KEY_FILE).read_text().strip() == key
    with TestClient(create_app(settings)) as client:
        client.get("/login")
        cookie = client.cookies["designlab_session"]
    TimestampSigner(key).unsign(cookie)
    with pytest.raises(BadSignature):
        TimestampSigner("designlab-development-secret-change-me").unsign(cookie)


def test_a_set_secret_key_is_used_as_given(make_settings):
    assert session_secret_key(make_settings()) == "test-secret-key-not-for-production"
