"""``designlab lint [STEPS_DIR]``: every error and warning in the course, with file and line."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from app.commands import ExitCode
from app.course.loader import load_course
from app.settings import get_settings


def lint(
    steps_dir: Annotated[
        Path | None, typer.Argument(help="The course folder; default STEPS_DIR (steps/).")
    ] = None,
) -> None:
    """Check the course folder; exit 1 when it has errors (warnings alone exit 0)."""
    root = steps_dir if steps_dir is not None else get_settings().steps_dir
    if not (root / "course.yaml").is_file():
        typer.echo(f"{root}: error: no course.yaml in this folder", err=True)
        raise typer.Exit(ExitCode.BAD_INPUT)
    course = load_course(root)
    for problem in sorted(course.problems, key=lambda p: (p.file, p.line or 0)):
        typer.echo(str(problem))
    errors, warnings = len(course.errors), len(course.warnings)
    typer.echo(f"{len(course.steps)} steps: {errors} errors, {warnings} warnings")
    if errors:
        raise typer.Exit(ExitCode.FINDINGS)
