"""Course lint rules for what grading reads: check expressions, explanations, figures, the
known-bad list and the pricing catalog (the check language is app.checks). Each is a rule of
app.course.lint (``LoadedCourse -> Problems``) and names the file, the line and the field.

Syntax errors in an expression or a template are reported by app.course.lint's own
``checks_well_formed``; these rules report what parses but would fail when graded: an unknown
name, function or field, unsupported syntax, an unknown filter, or a check its scenario cannot
exercise (it would pass, or fail, whatever the design).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from jinja2 import TemplateSyntaxError

from app.checks.exercised import MetricRead, counts_needed, metrics_read
from app.checks.explanations import explanation_problems, parsed, template_names
from app.checks.expressions import ReadScenario, expression_problems, names_used, parse
from app.course.content import LoadedCourse, LoadedStep, Problem
from app.course.content import linted_steps as linted
from app.course.figures import PLACEHOLDER
from app.course.models import Check
from simulator.errors import InputFileError
from simulator.pricing import load_pricing
from simulator.scenario import Scenario


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
    return step.problem("error", loc, message)


def _read_scenario(course: LoadedCourse, name: str | None) -> ReadScenario | None:
    """The scenario named ``name`` with its name, when the course holds it (an unknown name is
    reported by app.course.lint's ``scenarios_exist``)."""
    scenario = course.scenarios.get(name) if name is not None else None
    return (name, scenario) if name is not None and scenario is not None else None


def check_names_known(course: LoadedCourse) -> Iterable[Problem]:
    """Every name, function, field and dict key a check's expressions and templates read exists
    (app.checks.names), an enum is compared with its own values only, and a fault read by
    index is one the check's scenario has (its own ``scenario``, else its step's)."""
    for step, model in linted(course):
        for i, check in enumerate(model.checks):
            read = _read_scenario(course, check.scenario or model.scenario)
            if _parses(check.expr):
                for message in expression_problems(check.expr, read):
                    yield _error(step, ("checks", i, "expr"), message)
            for field, text in (
                ("explain", check.explain),
                ("pass", check.pass_message),
                ("fail", check.fail_message),
                ("hint", check.hint),
            ):
                if _template_parses(text):
                    for message in explanation_problems(text, read):
                        yield _error(step, ("checks", i, field), message)
            if check.needs is not None and _parses(check.needs.expr):
                for message in expression_problems(check.needs.expr, read):
                    yield _error(step, ("checks", i, "needs", "expr"), message)
            if check.needs is not None and _template_parses(check.needs.missing):
                for message in explanation_problems(check.needs.missing, read):
                    yield _error(step, ("checks", i, "needs", "missing"), message)


def checks_say_what_they_need(course: LoadedCourse) -> Iterable[Problem]:
    """A check whose expr reads a metric judged over a set that can be empty (model calls,
    processed events: app.checks.exercised) has a ``needs`` that reads that set's count, so an
    empty set grades *not exercised*, never a pass."""
    for step, model in linted(course):
        for i, check in enumerate(model.checks):
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
    """A step figure is an expression over the same names as a check's expr, read against the
    step's scenario."""
    for step, model in linted(course):
        read = _read_scenario(course, model.scenario)
        for name, expr in model.figures.items():
            if not _parses(expr):
                yield _error(step, ("figures", name), "expression does not parse")
                continue
            for message in expression_problems(expr, read):
                yield _error(step, ("figures", name), message)


_FIGURE_OPENING = re.compile(r"\{\{\s*figures\.")


def narrative_figures_declared(course: LoadedCourse) -> Iterable[Problem]:
    """Each ``{{ figures.name }}`` of a narrative names a figure its step declares, and is written
    so (app.course.figures.PLACEHOLDER): otherwise the page shows ``?``, or the raw braces."""
    for step, model in linted(course):
        text = step.narrative
        placed = {m.start(): m.group(1) for m in PLACEHOLDER.finditer(text)}
        for opening in _FIGURE_OPENING.finditer(text):
            line = text.count("\n", 0, opening.start()) + 1
            name = placed.get(opening.start())
            if name is None:
                message = "a figure is shown as {{ figures.name }}, nothing more inside the braces"
            elif name not in model.figures:
                known = ", ".join(sorted(model.figures)) or "none"
                message = f"no figure {name!r} in step.yaml's figures ({known})"
            else:
                continue
            field = f"figures.{name}" if name is not None else "figures"
            yield Problem("error", str(step.narrative_file), line, field, message, step.folder)


def known_bad_checks_exist(course: LoadedCourse) -> Iterable[Problem]:
    """Each known-bad design exists and names checks the course has (``id`` or ``step/id``).

    A step that did not validate still counts the check ids its step.yaml spells. When a step's
    file could not be read at all (a YAML syntax error, a missing file), the entries naming no
    known check are not reported one by one: a single warning says they could not be checked
    until that step loads."""
    if course.course is None:
        return
    ids: set[str] = set()
    unread: list[str] = []
    for step in course.steps:
        model = step.linted
        spelled = {c.id for c in model.checks} if model is not None else set()
        spelled |= set(step.spelled_check_ids)
        ids |= spelled | {f"{step.slug}/{check_id}" for check_id in spelled}
        if step.step is None and model is None and not step.spelled_check_ids:
            unread.append(step.folder)
    unchecked: list[tuple[str, int | None]] = []
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
        for key, names in (("fails", bad.fails), ("unjudged", bad.unjudged)):
            for j, check_id in enumerate(names):
                if check_id in ids:
                    continue
                line = course.course_lines.get(("known_bad", i, key, j))
                field = f"known_bad.{i}.{key}.{j}"
                if unread:
                    unchecked.append((field, line))
                    continue
                message = f"no check {check_id!r} in the course"
                yield Problem("error", str(course.course_file), line, field, message)
    if unchecked:
        field, line = unchecked[0]
        steps = ", ".join(unread)
        yield Problem(
            "warning",
            str(course.course_file),
            line,
            field,
            f"{len(unchecked)} known-bad check name(s) from here on could not be checked: step "
            f"{steps} did not load (fix its errors first)",
        )


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


FAULT_METRICS: dict[str, str] = {
    "state_writes_lost": "state_failover",
    "state_writes_rebuilt": "state_failover",
    "log_lost": "broker_loss",
    "producer_blocked_seconds": "broker_loss",
    "isr_shrunk_partitions": "follower_lag",
    "offset_reset_errors": "consumer_pause",
    "offset_reset_skipped": "consumer_pause",
    "flaky_events": "flaky",
    "flaky_recovered": "flaky",
    "flaky_given_up": "flaky",
    "saga_compensations": "saga_failure",
    "sagas_to_human_queue": "saga_failure",
}
"""Metrics that only one kind of fault produces, by that fault's ``kind``: the faults layer sets
them from that fault's own records alone (its layer's ``contribute`` in simulator/faults/), so in a
scenario without such a fault they are 0 whatever the design."""


def _unexercised(expr: str, scenario: Scenario, name: str) -> Iterable[str]:
    """Why a check's ``expr`` cannot be exercised by ``scenario``: a fault-specific metric of a
    fault the scenario lacks. (``scenario.faults[N]`` past its faults is refused by
    ``check_names_known``, in every expression and template.)"""
    kinds = {fault.kind for fault in scenario.faults}
    for node in ast.walk(parse(expr)):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            kind = FAULT_METRICS.get(node.attr)
            if node.value.id == "metrics" and kind is not None and kind not in kinds:
                yield (
                    f"reads metrics.{node.attr}, which only a {kind} fault produces, but scenario "
                    f"{name!r} has no {kind} fault: the check cannot be exercised (it is 0 "
                    "whatever the design)"
                )


def checks_exercised_by_their_scenario(course: LoadedCourse) -> Iterable[Problem]:
    """Each check can be exercised by the scenario it reads (its own ``scenario``, else its
    step's): no fault-specific metric (FAULT_METRICS) of a fault that scenario does not inject.
    (A fault timed after its scenario's end is refused by the scenario file's own reader,
    simulator/scenario.py.)"""
    for step, model in linted(course):
        for i, check in enumerate(model.checks):
            read = _read_scenario(course, check.scenario or model.scenario)
            if read is None or not _parses(check.expr):
                continue
            for message in _unexercised(check.expr, read[1], read[0]):
                yield _error(step, ("checks", i, "expr"), message)


def _reads_baseline(check: Check) -> bool:
    """Whether any of ``check``'s expressions or templates reads ``baseline_cost``."""
    read: set[str] = set()
    exprs = [check.expr] + ([check.needs.expr] if check.needs is not None else [])
    for expr in exprs:
        if _parses(expr):
            read |= names_used(expr)
    texts = [check.explain, check.pass_message, check.fail_message, check.hint]
    if check.needs is not None:
        texts.append(check.needs.missing)
    for text in texts:
        if _template_parses(text):
            read |= template_names(text)
    return "baseline_cost" in read


def baselines_are_earlier_steps(course: LoadedCourse) -> Iterable[Problem]:
    """A check's ``baseline_step`` names an earlier step of the course, and a check that reads
    ``baseline_cost`` has one (without it the name is None and the check errors)."""
    numbers = {s.number for s in course.steps}
    for step, model in linted(course):
        for i, check in enumerate(model.checks):
            base = check.baseline_step
            if base is not None and (base >= step.number or base not in numbers):
                yield _error(
                    step,
                    ("checks", i, "baseline_step"),
                    f"baseline_step {base} is not an earlier step of the course (this is step "
                    f"{step.number})",
                )
            if base is None and _reads_baseline(check):
                yield _error(
                    step,
                    ("checks", i),
                    "reads baseline_cost without a baseline_step: name the earlier step whose "
                    "design it compares with",
                )


RULES = [
    check_names_known,
    baselines_are_earlier_steps,
    checks_say_what_they_need,
    figure_names_known,
    narrative_figures_declared,
    known_bad_checks_exist,
    pricing_catalog_valid,
    checks_exercised_by_their_scenario,
]
"""The grading rules, for app.course.lint's RULES."""
