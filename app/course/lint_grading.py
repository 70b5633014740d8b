"""Course lint rules for what grading reads: check expressions, explanations, figures, the
known-bad list and the pricing catalog (the check language is app.checks). Each is a rule of
app.course.lint (``LoadedCourse -> Problems``) and names the file, the line and the field.

Syntax errors in an expression or a template are reported by app.course.lint's own
``checks_well_formed``; these rules report what parses but would fail when graded: an unknown
name, function or field, unsupported syntax, an unknown filter.
"""

from __future__ import annotations

from collections.abc import Iterable

from jinja2 import TemplateSyntaxError

from app.checks.exercised import MetricRead, counts_needed, metrics_read
from app.checks.explanations import explanation_problems, parsed
from app.checks.expressions import expression_problems, parse
from app.course.content import LoadedCourse, LoadedStep, Problem
from simulator.errors import InputFileError
from simulator.pricing import load_pricing


def _parses(expr: str) -> bool:
    try:
        parse(expr)
    except SyntaxError:
        return False
    return True


def _template_parses(text: str) -> bool:
    try:
        parsed(text)
    except TemplateSyntaxError:
        return False
    return True


def _error(step: LoadedStep, loc: tuple[str | int, ...], message: str) -> Problem:
    field = ".".join(str(p) for p in loc)
    return Problem("error", str(step.step_file), step.line_of(*loc), field, message, step.folder)


def check_names_known(course: LoadedCourse) -> Iterable[Problem]:
    """Every name, function and field a check's expr or explain reads exists (app.checks.names)."""
    for step in course.steps:
        if step.step is None:
            continue
        for i, check in enumerate(step.step.checks):
            if _parses(check.expr):
                for message in expression_problems(check.expr):
                    yield _error(step, ("checks", i, "expr"), message)
            for field, text in (
                ("explain", check.explain),
                ("pass", check.pass_message),
                ("fail", check.fail_message),
            ):
                if _template_parses(text):
                    for message in explanation_problems(text):
                        yield _error(step, ("checks", i, field), message)
            if check.needs is not None and _parses(check.needs.expr):
                for message in expression_problems(check.needs.expr):
                    yield _error(step, ("checks", i, "needs", "expr"), message)


def checks_say_what_they_need(course: LoadedCourse) -> Iterable[Problem]:
    """A check whose expr reads a metric judged over a set that can be empty (model calls,
    processed events: app.checks.exercised) has a ``needs`` that reads that set's count, so an
    empty set grades *not exercised*, never a pass."""
    for step in course.steps:
        if step.step is None:
            continue
        for i, check in enumerate(step.step.checks):
            if not _parses(check.expr):
                continue
            wanted = counts_needed(check.expr)
            if not wanted:
                continue
            if check.needs is None:
                names = ", ".join(str(c) for c in sorted(wanted, key=MetricRead.sort_key))
                message = (
                    f"the check judges a set that can be empty: add needs with an expr on {names}"
                    " (e.g. > 0) and what is missing when it is not"
                )
                yield _error(step, ("checks", i, "expr"), message)
                continue
            if not _parses(check.needs.expr):
                continue
            missing = wanted - metrics_read(check.needs.expr)
            if missing:
                names = ", ".join(str(c) for c in sorted(missing, key=MetricRead.sort_key))
                yield _error(step, ("checks", i, "needs", "expr"), f"needs does not read {names}")


def figure_names_known(course: LoadedCourse) -> Iterable[Problem]:
    """A step figure is an expression over the same names as a check's expr."""
    for step in course.steps:
        if step.step is None:
            continue
        for name, expr in step.step.figures.items():
            if not _parses(expr):
                yield _error(step, ("figures", name), "expression does not parse")
                continue
            for message in expression_problems(expr):
                yield _error(step, ("figures", name), message)


def known_bad_checks_exist(course: LoadedCourse) -> Iterable[Problem]:
    """Each known-bad design exists and names checks the course has (``id`` or ``step/id``)."""
    if course.course is None:
        return
    ids: set[str] = set()
    for step in course.steps:
        if step.step is not None:
            ids |= {c.id for c in step.step.checks}
            ids |= {f"{step.step.id}/{c.id}" for c in step.step.checks}
    for i, bad in enumerate(course.course.known_bad):
        if not (course.root / bad.file).is_file():
            line = course.course_lines.get(("known_bad", i, "file"))
            yield Problem(
                "error",
                str(course.course_file),
                line,
                f"known_bad.{i}.file",
                f"{bad.file} does not exist",
            )
        for j, check_id in enumerate(bad.fails):
            if check_id not in ids:
                line = course.course_lines.get(("known_bad", i, "fails", j))
                field = f"known_bad.{i}.fails.{j}"
                message = f"no check {check_id!r} in the course"
                yield Problem("error", str(course.course_file), line, field, message)


def pricing_catalog_valid(course: LoadedCourse) -> Iterable[Problem]:
    """The pricing catalog named in course.yaml loads (every field, with its line)."""
    if course.course is None:
        return
    path = course.root / course.course.pricing
    if not path.is_file():
        return
    try:
        load_pricing(path)
    except InputFileError as exc:
        for error in exc.errors:
            yield Problem.from_field_error(error)


RULES = [
    check_names_known,
    checks_say_what_they_need,
    figure_names_known,
    known_bad_checks_exist,
    pricing_catalog_valid,
]
"""The grading rules, for app.course.lint's RULES."""
