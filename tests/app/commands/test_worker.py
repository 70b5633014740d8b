"""``designlab worker``: needs REDIS_URL (the scale-out tests start real workers)."""

from __future__ import annotations

from typer.testing import CliRunner

from app.cli import main
from app.settings import get_settings

runner = CliRunner()


def test_a_worker_without_redis_url_is_bad_input_naming_the_setting(tmp_path, monkeypatch):
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'cli.sqlite3'}")
    get_settings.cache_clear()
    try:
        result = runner.invoke(main, ["worker"])
    finally:
        get_settings.cache_clear()
    assert result.exit_code == 2
    assert "REDIS_URL is not set" in result.output
