"""The designlab CLI: exit codes 0 ok, 1 findings, 2 bad input, 3 internal; messages name lines."""

from __future__ import annotations

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from app.cli import main
from app.db import make_engine, make_sessionmaker
from app.models import Role, User
from app.settings import get_settings
from tests.factories import DECIDING_STEP, write

runner = CliRunner()


@pytest.fixture
def env_db(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'var' / 'cli.sqlite3'}"
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.setenv("ENV", "development")
    get_settings.cache_clear()
    yield url
    get_settings.cache_clear()


def test_lint_of_a_clean_course_exits_0(course_dir):
    result = runner.invoke(main, ["lint", str(course_dir)])
    assert result.exit_code == 0, result.output
    assert result.output.strip().splitlines()[-1] == "3 steps: 0 errors, 0 warnings"


def test_lint_lists_every_error_with_file_and_line_and_exits_1(course_dir):
    text = DECIDING_STEP.replace("event_log.partitions", "event_log.shards").replace(
        "scenario: peak", "scenario: peek"
    )
    write(course_dir / "01-commit-order" / "step.yaml", text)
    write(course_dir / "03-worker-crash" / "step.yaml", "id: worker-crash\ntitle: [\n")
    result = runner.invoke(main, ["lint", str(course_dir)])
    assert result.exit_code == 1, result.output
    step = course_dir / "01-commit-order" / "step.yaml"
    lines = result.output.splitlines()
    assert f"{step}:4: error: scenario: unknown scenario 'peek': " in "\n".join(lines)
    assert any(line.startswith(f"{step}:10: error: decisions.1.field: ") for line in lines)
    assert any(
        line.startswith(f"{course_dir / '03-worker-crash' / 'step.yaml'}:2: error:")
        for line in lines
    )
    assert lines[-1] == "3 steps: 3 errors, 0 warnings"


def test_lint_warnings_alone_exit_0(course_dir):
    write(course_dir / "99-draft" / "step.yaml", "id: draft\n")
    result = runner.invoke(main, ["lint", str(course_dir)])
    assert result.exit_code == 0, result.output
    assert "warning: step folder not listed in course.yaml steps" in result.output


def test_lint_of_a_folder_without_course_yaml_is_bad_input(tmp_path):
    result = runner.invoke(main, ["lint", str(tmp_path)])
    assert result.exit_code == 2
    assert "no course.yaml" in result.output


def test_an_unknown_option_is_a_usage_error():
    assert runner.invoke(main, ["lint", "--frobnicate"]).exit_code == 2


def test_migrate_then_create_user_stores_an_argon2_hash(env_db):
    assert runner.invoke(main, ["migrate"]).exit_code == 0
    result = runner.invoke(
        main,
        ["create-user", "--email", "ina@example.com", "--role", "instructor"],
        input="a long password\na long password\n",
    )
    assert result.exit_code == 0, result.output
    with make_sessionmaker(make_engine(env_db))() as session:
        user = session.scalars(select(User)).one()
    assert (user.email, user.role) == ("ina@example.com", Role.instructor)
    assert user.password_hash and user.password_hash.startswith("$argon2id$")


def test_create_user_prompts_read_password_and_repeat_without_an_empty_default(env_db):
    result = runner.invoke(
        main,
        ["create-user", "--email", "pat@example.com"],
        input="a long password\na long password\n",
    )
    assert result.exit_code == 0, result.output
    prompts = result.output.splitlines()[:2]
    assert prompts == ["Password: ", "Repeat for confirmation: "]
    assert "[]" not in result.output


def test_create_user_twice_is_bad_input(env_db):
    args = ["create-user", "--email", "lee@example.com", "--password", "a long password"]
    assert runner.invoke(main, args).exit_code == 0
    result = runner.invoke(main, args)
    assert result.exit_code == 2
    assert "already exists" in result.output


def test_set_password_and_remove_user_end_the_accounts_sessions(env_db):
    args = ["create-user", "--email", "ed@example.com", "--password", "a long password"]
    assert runner.invoke(main, args).exit_code == 0
    new = ["set-password", "--email", "ed@example.com"]
    result = runner.invoke(main, new, input="another password\nanother password\n")
    assert result.exit_code == 0, result.output
    assert "its sessions have ended" in result.output
    with make_sessionmaker(make_engine(env_db))() as session:
        assert session.scalars(select(User)).one().session_generation == 1
    assert runner.invoke(main, ["remove-user", "--email", "ed@example.com"], input="n\n").exit_code
    result = runner.invoke(main, ["remove-user", "--email", "ed@example.com", "--yes"])
    assert result.exit_code == 0, result.output
    with make_sessionmaker(make_engine(env_db))() as session:
        assert session.scalars(select(User)).all() == []
    result = runner.invoke(main, ["remove-user", "--email", "ed@example.com", "--yes"])
    assert result.exit_code == 2
    assert "no account with email ed@example.com" in result.output


def test_production_without_a_secret_key_refuses_to_start_with_exit_2(env_db, monkeypatch):
    monkeypatch.setenv("ENV", "production")
    monkeypatch.delenv("SECRET_KEY", raising=False)
    get_settings.cache_clear()
    result = runner.invoke(main, ["serve", "--port", "1"])
    assert result.exit_code == 2, result.output
    assert "error: settings: Value error, SECRET_KEY is not set" in result.output


def test_an_unexpected_exception_exits_3(env_db, monkeypatch):
    def explode(url: str) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr("app.db.upgrade", explode)
    result = runner.invoke(main, ["migrate"])
    assert result.exit_code == 3
    assert "internal error: RuntimeError: disk on fire" in result.output


def test_version_names_the_package_and_the_simulator():
    from importlib.metadata import version

    from simulator import SIMULATOR_VERSION

    result = runner.invoke(main, ["--version"])
    assert result.exit_code == 0, result.output
    expected = f"designlab {version('designlab')} (simulator {SIMULATOR_VERSION})"
    assert result.output.strip() == expected


def test_a_reader_that_closes_the_pipe_is_not_an_internal_error():
    """``designlab grade steps/designs/reference.yaml | head -1``: the writer meets a closed
    pipe; it stops quietly with the shell's SIGPIPE status (141), never "internal error"."""
    import subprocess
    import sys
    from pathlib import Path

    script = (
        "import sys\n"
        "from app.cli import main\n"
        "sys.argv = ['designlab', 'grade', 'steps/designs/reference.yaml']\n"
        "main()\n"
    )
    writer = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert writer.stdout is not None
    writer.stdout.close()  # the reader is gone before the first write
    _, stderr = writer.communicate(timeout=120)
    assert b"internal error" not in stderr, stderr
    assert writer.returncode == 141
