"""``designlab lint [STEPS_DIR] [--seeds DIR] [--stats]``: every error and warning in the course,
with file and line; with ``--seeds``, the runs of words the course shares with its sources; with
``--stats``, how long the course takes (app.grading.reading_time)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from app.commands import ExitCode
from app.course.content import lint_summary
from app.course.loader import load_course
from app.course.shared_words import SHARED_RUN_WORDS, shared_with_seeds
from app.grading.grader import CourseNotGradable, load_material
from app.settings import get_settings


def lint(
    steps_dir: Annotated[
        Path | None, typer.Argument(help="The course folder; default STEPS_DIR (steps/).")
    ] = None,
    seeds: Annotated[
        Path | None,
        typer.Option(
            "--seeds",
            help=f"Folder of the course's source texts (*.txt): warn of every run of "
            f"{SHARED_RUN_WORDS} or more words a course text shares with them.",
        ),
    ] = None,
    stats: Annotated[
        bool,
        typer.Option(
            "--stats",
            help="Print the time the course takes, per step and in total: reading, deciding "
            "and running (simulates every scenario for the starting design).",
        ),
    ] = False,
    run_seconds: Annotated[
        float | None,
        typer.Option(
            "--run-seconds",
            min=0,
            help="With --stats: count this many seconds per scenario run instead of the "
            "measured simulation time.",
        ),
    ] = None,
) -> None:
    """Check the course folder; exit 1 when it has errors (warnings alone exit 0)."""
    root = steps_dir if steps_dir is not None else get_settings().steps_dir
    if not (root / "course.yaml").is_file():
        typer.echo(f"{root}: error: no course.yaml in this folder", err=True)
        raise typer.Exit(ExitCode.BAD_INPUT)
    course = load_course(root)
    problems = list(course.problems)
    shared = 0
    if seeds is not None:
        try:
            runs = shared_with_seeds(root, seeds)
        except OSError as exc:
            typer.echo(f"{seeds}: error: --seeds: {exc}", err=True)
            raise typer.Exit(ExitCode.BAD_INPUT) from exc
        problems += [run.problem() for run in runs]
        shared = len(runs)
    for problem in sorted(problems, key=lambda p: (p.file, p.line or 0)):
        typer.echo(str(problem))
    errors = len(course.errors)
    warnings = sum(p.severity == "warning" for p in problems)
    typer.echo(lint_summary(len(course.steps), errors, warnings))
    if seeds is not None:
        files = len({p.file for p in problems[len(course.problems) :]})
        typer.echo(
            f"{shared} run{'' if shared == 1 else 's'} of {SHARED_RUN_WORDS} or more words "
            f"shared with the sources, in {files} file{'' if files == 1 else 's'}"
        )
    if stats:
        _print_stats(root, run_seconds)
    if errors:
        raise typer.Exit(ExitCode.FINDINGS)


def _print_stats(root: Path, run_seconds: float | None) -> None:
    # Here, not at the top: it loads Markdown, which every other command (grade) can do without.
    from app.grading.reading_time import course_time, stats_table

    try:
        material = load_material(root)
    except CourseNotGradable as exc:
        for problem in exc.problems:
            typer.echo(str(problem), err=True)
        raise typer.Exit(ExitCode.FINDINGS) from exc
    typer.echo("")
    for line in stats_table(course_time(material, run_seconds=run_seconds)):
        typer.echo(line)
