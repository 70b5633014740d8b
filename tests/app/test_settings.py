"""Settings: defaults a newcomer can run with, and a missing secret refused outside development."""

import ast
from pathlib import Path

import pytest
from pydantic import ValidationError

import app.settings
from app.settings import Settings


def test_defaults_are_a_sqlite_file_under_var_and_the_steps_folder(monkeypatch):
    for name in ("ENV", "DEBUG", "DATABASE_URL", "SECRET_KEY", "STEPS_DIR"):
        monkeypatch.delenv(name, raising=False)
    settings = Settings(_env_file=None)
    assert settings.database_url == "sqlite:///var/designlab.sqlite3"
    assert settings.steps_dir == Path(__file__).resolve().parents[2] / "steps"
    assert settings.steps_dir.is_absolute()
    assert settings.env == "development"
    assert settings.watch_steps


def test_environment_variables_are_read(monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgresql+psycopg://u:p@db:5432/designlab")
    monkeypatch.setenv("STEPS_DIR", "/srv/course")
    monkeypatch.setenv("DEBUG", "true")
    settings = Settings(_env_file=None)
    assert settings.database_url == "postgresql+psycopg://u:p@db:5432/designlab"
    assert settings.steps_dir == Path("/srv/course")
    assert settings.debug is True


@pytest.mark.parametrize("env", ["production", "test"])
def test_a_missing_secret_is_refused_outside_development(env, monkeypatch):
    monkeypatch.delenv("SECRET_KEY", raising=False)
    with pytest.raises(ValidationError, match="SECRET_KEY is not set"):
        Settings(_env_file=None, env=env)


def test_no_secret_key_is_shipped_in_the_repository(monkeypatch):
    monkeypatch.delenv("SECRET_KEY", raising=False)
    assert Settings(_env_file=None).secret_key is None
    assert not [name for name in vars(app.settings) if "SECRET" in name and "FILE" not in name]


def test_a_short_secret_is_refused():
    with pytest.raises(ValidationError, match="secret_key"):
        Settings(_env_file=None, env="production", secret_key="short")


def test_a_real_secret_is_accepted_in_production():
    settings = Settings(_env_file=None, env="production", secret_key="x" * 40)
    assert settings.secret_key == "x" * 40
    assert not settings.watch_steps


def test_every_setting_is_documented():
    """Every field of Settings is followed by its docstring in app/settings.py."""
    tree = ast.parse(Path(app.settings.__file__).read_text(encoding="utf-8"))
    [body] = [n.body for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Settings"]
    documented = {
        node.target.id
        for node, after in zip(body, body[1:], strict=False)
        if isinstance(node, ast.AnnAssign)
        and isinstance(node.target, ast.Name)
        and isinstance(after, ast.Expr)
        and isinstance(after.value, ast.Constant)
        and isinstance(after.value.value, str)
        and after.value.value.strip()
    }
    assert set(Settings.model_fields) - documented == set()
    assert len(documented) == len(Settings.model_fields)
