"""The command line loads only what a command needs: ``designlab grade``, ``simulate`` and
``lint`` load nothing of the web stack or the database (issue 18: importing them was most of a
grade's start-up). Each command runs in a fresh interpreter, as from a shell, which then lists
every module it loaded.

jinja2 itself is not on the list: the course's check explanations are sandboxed Jinja2 templates
(app.checks.explanations), so grading and linting need it; the web's templating
(jinja2_fragments, app.web) is on it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "grading" / "fixtures"

WEB_AND_DATABASE = (
    # the web stack
    "fastapi",
    "starlette",
    "uvicorn",
    "jinja2_fragments",
    "multipart",
    "python_multipart",
    "httpx",
    "itsdangerous",
    "limits",
    "prometheus_client",
    "watchfiles",
    "celery",
    "redis",
    "app.main",
    "app.deps",
    "app.web",
    "app.api",
    "app.middleware",
    "app.taskqueue",
    # the database and accounts
    "sqlalchemy",
    "alembic",
    "psycopg",
    "argon2",
    "app.db",
    "app.models",
    "app.migrations",
    "app.accounts",
)
"""Packages and modules (with their submodules) no grade, simulate or lint may load."""

DRIVER = """
import json, sys
from app.cli import main
out, argv = sys.argv[1], sys.argv[2:]
code = None
if argv:
    try:
        main(argv, prog_name="designlab")
    except SystemExit as exc:
        code = exc.code
with open(out, "w", encoding="utf-8") as f:
    json.dump({"exit_code": code, "modules": sorted(sys.modules)}, f)
"""
"""Runs ``designlab ARGV`` (nothing but the import with no ARGV) and writes the exit code and
every loaded module's name to the file named first."""


def loaded_by(tmp_path: Path, *argv: str) -> tuple[int | None, list[str]]:
    """(exit code, modules loaded) of ``designlab *argv`` in a fresh interpreter."""
    out = tmp_path / "modules.json"
    subprocess.run(
        [sys.executable, "-c", DRIVER, str(out), *argv],
        cwd=REPO,
        check=True,
        stdout=subprocess.DEVNULL,
        timeout=120,
    )
    found = json.loads(out.read_text(encoding="utf-8"))
    return found["exit_code"], found["modules"]


def forbidden(modules: list[str]) -> list[str]:
    """The modules of WEB_AND_DATABASE (or under them) among ``modules``."""
    return [m for m in modules for f in WEB_AND_DATABASE if m == f or m.startswith(f + ".")]


def test_the_rule_sees_a_web_or_database_module() -> None:
    """The check itself: submodules count, a module that only shares a prefix does not."""
    assert forbidden(["sqlalchemy.orm", "app.web.pages", "app.webhooks", "simulator"]) == [
        "sqlalchemy.orm",
        "app.web.pages",
    ]


COMMANDS = {
    "import": (),
    "grade": (
        "grade",
        str(FIXTURES / "course" / "designs" / "reference.yaml"),
        "--steps-dir",
        str(FIXTURES / "course"),
        "--format",
        "json",
    ),
    "simulate": (
        "simulate",
        str(FIXTURES / "simulated" / "designs" / "reference.yaml"),
        "--scenario",
        "tiny",
        "--steps-dir",
        str(FIXTURES / "simulated"),
        "--json",
    ),
    "lint": ("lint", str(FIXTURES / "course")),
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_grade_simulate_and_lint_load_no_web_or_database_module(
    command: str, tmp_path: Path
) -> None:
    """Each command runs to its end (exit 0) without loading a web or database module."""
    exit_code, modules = loaded_by(tmp_path, *COMMANDS[command])
    assert exit_code in (None, 0)
    assert "app.cli" in modules
    assert forbidden(modules) == []


def test_the_command_line_loads_no_markdown_until_lint_rules_run(tmp_path: Path) -> None:
    """Markdown (markdown-it, nh3) serves the lint rules and the web pages: importing the
    command line (``--help``, ``schema``) does not load it."""
    _, modules = loaded_by(tmp_path, *COMMANDS["import"])
    assert [m for m in modules if m.split(".")[0] in ("markdown_it", "nh3")] == []
    assert "app.course.narrative" not in modules


def test_the_database_commands_still_load_it(tmp_path: Path) -> None:
    """``migrate`` loads the database when it runs (the import moved into the command)."""
    database = tmp_path / "designlab.sqlite3"
    out = tmp_path / "modules.json"
    subprocess.run(
        [sys.executable, "-c", DRIVER, str(out), "migrate"],
        cwd=REPO,
        check=True,
        stdout=subprocess.DEVNULL,
        timeout=120,
        env={**os.environ, "DATABASE_URL": f"sqlite:///{database}"},
    )
    found = json.loads(out.read_text(encoding="utf-8"))
    assert found["exit_code"] == 0
    assert "sqlalchemy" in found["modules"] and "app.db" in found["modules"]
    assert database.is_file()


@pytest.mark.parametrize("command", ["import", "lint"])
def test_commands_that_never_simulate_do_not_load_the_engine(command: str, tmp_path: Path) -> None:
    """numpy, SimPy and simulator.engine load only when a command simulates (grade, simulate)."""
    exit_code, modules = loaded_by(tmp_path, *COMMANDS[command])
    assert exit_code in (None, 0)
    engine = [
        m
        for m in modules
        if m.split(".")[0] in {"numpy", "simpy"} or m.startswith("simulator.engine")
    ]
    assert engine == []
