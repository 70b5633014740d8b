"""``designlab export [--out FILE] [--steps-dir D]``: the class's grades as CSV (app/export.py).

The database and the class table load inside the command, when it runs (not for every command).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from app.commands import ExitCode
from app.settings import get_settings


def export_command(
    out: Annotated[
        Path | None, typer.Option("--out", help="Write the CSV here instead of to stdout.")
    ] = None,
    steps_dir: Annotated[
        Path | None, typer.Option(help="The course folder; default STEPS_DIR (steps/).")
    ] = None,
) -> None:
    """Write one CSV row per learner: points per step, total, first and last activity."""
    from app.course.loader import load_course
    from app.db import make_engine, make_sessionmaker, session_scope, upgrade
    from app.export import grades_csv
    from app.instructor.class_progress import class_table

    settings = get_settings()
    root = steps_dir if steps_dir is not None else settings.steps_dir
    course = load_course(root)
    if course.course is None:
        for problem in course.errors:
            typer.echo(f"error: {problem}", err=True)
        raise typer.Exit(ExitCode.BAD_INPUT)
    upgrade(settings.database_url)
    for session in session_scope(make_sessionmaker(make_engine(settings.database_url))):
        table = class_table(session, course)
    text = grades_csv(table)
    if out is None:
        typer.echo(text, nl=False)
        return
    out.write_text(text, encoding="utf-8", newline="")
    learners = len(table.rows)
    typer.echo(f"wrote {learners} learner{'s' if learners != 1 else ''} to {out}", err=True)
