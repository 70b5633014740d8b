"""``designlab grade DESIGN [--seed N] [--format text|json|junit] [--out FILE] [--steps-dir D]
[--max-step-events N] [--timeout-seconds S]``.

Contract 4. Exit codes: 0 every check passed; 1 a check failed; 2 bad input or usage (the
message names the file, line and field), a simulation over the budgets included (the result's
``errors`` name the field that makes it big or slow); 3 internal error (the course or the
simulator could not grade). A result is always written, in the requested format, an error
result included; with ``--out`` it goes through a temporary file and a rename, so a reader never
finds half a report.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from app.commands import ExitCode
from app.commands.budget import MaxStepEvents, TimeoutSeconds, budgeted
from app.course.content import LoadedStep
from app.errors import Unavailable
from app.grading.grader import (
    CourseMaterial,
    CourseNotGradable,
    Simulate,
    error_result,
    grade,
    input_problems,
    load_material,
    problem,
)
from app.grading.reports import ReportFormat, emit, render
from app.grading.result import GradeResult
from app.settings import get_settings
from simulator.errors import InputFileError
from simulator.files import line_of, load_design, parse_yaml, read_text


@dataclass(frozen=True)
class Outcome:
    """A grade as the CLI reports it: the result and the exit code."""

    result: GradeResult
    exit_code: int


def _exit_code(result: GradeResult) -> int:
    if result.status == "pass":
        return ExitCode.OK
    if result.status == "fail":
        return ExitCode.FINDINGS
    return ExitCode.BAD_INPUT if result.errors else ExitCode.INTERNAL


def grade_file(
    design_path: Path,
    steps_dir: Path,
    seed: int | None = None,
    simulate: Simulate | None = None,
    steps: Sequence[str] = (),
) -> Outcome:
    """Grade the design file at ``design_path`` against the course in ``steps_dir``, simulating
    with ``simulate`` (default: ``simulator.simulate`` without budgets). ``steps``: grade only
    these steps (each a number or an id; every step when empty), each judging the design as its
    place in the whole course gives it; the result then has no whole-course ``cost``.

    Never raises: a bad design file or folder, a step the course does not have, or a simulation
    refused for its fields (the result's ``errors``), gives an error result with exit code 2; a
    course that cannot grade, a simulation stopped on a busy machine or an unexpected exception
    an error result with exit code 3.
    """
    if not steps_dir.is_dir():
        message = f"course folder {steps_dir} does not exist (set --steps-dir or STEPS_DIR)"
        result = error_result([problem(str(steps_dir), message)], message, seed=seed)
        return Outcome(result, ExitCode.BAD_INPUT)
    material: CourseMaterial | None = None
    try:
        material = load_material(steps_dir)
        only = _chosen_steps(material, steps) if steps else None
        design = load_design(design_path)
        result = grade(design, material, seed=seed, simulate=simulate, only=only)
    except typer.BadParameter as exc:  # a --step the course does not have
        message = exc.format_message()
        result = error_result([problem("--step", message)], message, seed=seed, material=material)
        return Outcome(result, ExitCode.BAD_INPUT)
    except InputFileError as exc:
        problems = input_problems(exc)
        message = f"{design_path} is not a valid design: {len(problems)} problem(s)"
        result = error_result(problems, message, seed=seed, material=material)
        return Outcome(result, ExitCode.BAD_INPUT)
    except CourseNotGradable as exc:
        message = f"the course in {steps_dir} cannot grade: {len(exc.problems)} problem(s)"
        return Outcome(error_result(exc.problems, message, seed=seed), ExitCode.INTERNAL)
    except Unavailable as exc:  # the machine could not run it: no verdict on the design
        message = f"no grade (not the design's fault): {exc.detail}"
        result = error_result([problem(str(design_path), message)], message, seed=seed)
        return Outcome(result, ExitCode.INTERNAL)
    except Exception as exc:
        traceback.print_exc(file=sys.stderr)
        message = f"internal error: {type(exc).__name__}: {exc}"
        result = error_result([problem(str(design_path), message)], message, seed=seed)
        return Outcome(result, ExitCode.INTERNAL)
    return Outcome(_located(result, design_path), _exit_code(result))


def _chosen_steps(material: CourseMaterial, wanted: Sequence[str]) -> list[LoadedStep]:
    """The course's steps ``wanted`` names (a 1-based number or a step id), in course order.
    Raises BadParameter naming the unknown ones and the choices."""
    steps = [s for s in material.loaded.steps if s.step is not None]
    names = {str(s.number): s for s in steps} | {s.slug: s for s in steps}
    unknown = [w for w in wanted if w not in names]
    if unknown:
        choices = ", ".join(f"{s.number} ({s.slug})" for s in steps)
        raise typer.BadParameter(
            f"no step {', '.join(map(repr, unknown))}; choose from {choices}",
            param_hint="--step",
        )
    chosen = {names[w].number for w in wanted}
    return [s for s in steps if s.number in chosen]


def _located(result: GradeResult, design_path: Path) -> GradeResult:
    """``result`` with its problems about a design field (file ``design``: a refused simulation
    names the field, not where it came from) pointing at ``design_path`` and the field's line."""
    from app.sim_budget import DESIGN_FILE  # here: it loads the engine, which lint never needs

    if not any(p.file == DESIGN_FILE for p in result.errors):
        return result
    try:
        _, lines = parse_yaml(read_text(design_path), str(design_path))
    except InputFileError:  # it loaded a moment ago; keep the field without its line
        lines = {}
    located = [
        p.model_copy(
            update={
                "file": str(design_path),
                "line": line_of(lines, tuple(p.field.split("."))) if p.field else None,
            }
        )
        if p.file == DESIGN_FILE
        else p
        for p in result.errors
    ]
    return result.model_copy(update={"errors": located})


def grade_command(
    design: Annotated[
        Path, typer.Argument(help="The design file (YAML, version: 1, which may be left out).")
    ],
    seed: Annotated[
        int | None,
        typer.Option(
            help="Seed for every scenario; default: each scenario's own seed.", min=0, max=2**63 - 1
        ),
    ] = None,
    report_format: Annotated[
        ReportFormat, typer.Option("--format", help="Report format.")
    ] = ReportFormat.text,
    out: Annotated[
        Path | None, typer.Option(help="Write the report to this file instead of standard output.")
    ] = None,
    steps_dir: Annotated[
        Path | None, typer.Option(help="The course folder; default STEPS_DIR (steps/).")
    ] = None,
    step: Annotated[
        list[str] | None,
        typer.Option(
            help="Grade only this step (its number or id; give it again for more): each judges "
            "the design as in the whole course; no whole-course cost.",
        ),
    ] = None,
    max_step_events: MaxStepEvents = None,
    timeout_seconds: TimeoutSeconds = None,
) -> None:
    """Grade a design against every step; exit 0 pass, 1 fail, 2 bad input (a simulation the
    design makes too large or slow included), 3 internal error or a simulation stopped on a busy
    machine."""
    if out is not None and not os.access(out.parent if str(out.parent) else Path("."), os.W_OK):
        # Said before a grade of seconds is thrown away (emit() still reports any later failure).
        typer.echo(f"error: cannot write {out}: its folder is missing or not writable", err=True)
        raise typer.Exit(ExitCode.BAD_INPUT)
    simulate = budgeted(max_step_events, timeout_seconds)
    outcome = grade_file(design, steps_dir or get_settings().steps_dir, seed, simulate, step or ())
    result = outcome.result
    if out is not None or report_format is not ReportFormat.text:
        # The text report on the terminal lists them already; elsewhere they go to stderr too.
        for found in result.errors:
            typer.echo(f"error: {found}", err=True)
    try:
        emit(render(result, report_format), out)
    except BrokenPipeError:
        raise  # the reader of standard output went away: app.cli says so, not "cannot write"
    except OSError as exc:
        where = out or "standard output"
        typer.echo(f"error: cannot write {where}: {exc.strerror or exc}", err=True)
        raise typer.Exit(ExitCode.BAD_INPUT) from exc
    if out is not None:
        typer.echo(f"{result.status.upper()} {result.points}/{result.max_points}: {result.message}")
        typer.echo(f"report written to {out}")
    raise typer.Exit(outcome.exit_code)
