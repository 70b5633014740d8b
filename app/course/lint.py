"""Course lint: rules that look at a loaded course and report errors and warnings with lines.

A rule is a function ``(LoadedCourse) -> Iterable[Problem]``. The loader runs every rule in
RULES on each load; a Problem with ``step`` set to a step's folder and severity error makes that
step unavailable. To add a rule, write the function (here or in its own module) and append it
to RULES. ``designlab lint`` prints what the loader and the rules found.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from jinja2 import TemplateSyntaxError
from pydantic import ValidationError

from app.checks.explanations import parsed
from app.checks.expressions import parse
from app.course.content import LoadedCourse, LoadedStep, Problem, folder_slug, linted_steps
from app.course.design_fields import DesignField, UnknownField, design_field, with_values
from app.course.lint_checks import RULES as CHECK_RULES
from app.course.lint_grading import RULES as GRADING_RULES
from simulator.design import Design

if TYPE_CHECKING:
    from app.course.models import Decision, Step

Rule = Callable[[LoadedCourse], Iterable[Problem]]


def _steps(course: LoadedCourse) -> Iterable[tuple[LoadedStep, Step]]:
    """Steps lint can check: those that loaded and what was salvaged of the others."""
    return linted_steps(course)


def _at(step: LoadedStep, severity: str, loc: tuple[str | int, ...], message: str) -> Problem:
    return step.problem("error" if severity == "error" else "warning", loc, message)


def expression_syntax_error(expr: str) -> str | None:
    """None when ``expr`` parses as one Python expression (simpleeval's syntax), else why.

    The tree is the grader's own (app.checks.expressions.parse, cached), so lint and grading
    agree on what parses and each expression is parsed once per process."""
    try:
        parse(expr)
    except SyntaxError as exc:
        return f"expression does not parse: {exc.msg}"
    return None


def template_syntax_error(text: str) -> str | None:
    """None when ``text`` parses as a Jinja2 template, else the error with its template line.

    Parsed by the explanations' own environment (app.checks.explanations.parsed, cached)."""
    try:
        parsed(text)
    except TemplateSyntaxError as exc:
        return f"template does not parse (template line {exc.lineno}): {exc.message}"
    return None


def step_ids_unique(course: LoadedCourse) -> Iterable[Problem]:
    """Two steps with one id would share a URL; the id is the folder name without its number
    (steps/README: ``04-exactly-once-effects`` holds ``exactly-once-effects``)."""
    counts = Counter(model.id for _, model in _steps(course))
    for step, model in _steps(course):
        if counts[model.id] > 1:
            yield _at(step, "error", ("id",), f"step id {model.id!r} is used by another step")
        if folder_slug(step.folder) != model.id:
            yield _at(
                step,
                "error",
                ("id",),
                f"id {model.id!r} does not match the folder name {step.folder!r}: it must be the "
                f"folder's name without its number ({folder_slug(step.folder)!r})",
            )


def check_ids_unique(course: LoadedCourse) -> Iterable[Problem]:
    """A check id names one check in the course: known-bad entries, reports and the class's
    progress name checks by id alone (a repeat within one step is ``checks_well_formed``'s)."""
    steps_of: dict[str, list[str]] = {}
    for step, model in _steps(course):
        for check_id in dict.fromkeys(c.id for c in model.checks):
            steps_of.setdefault(check_id, []).append(step.folder)
    for step, model in _steps(course):
        seen: set[str] = set()
        for i, check in enumerate(model.checks):
            others = [f for f in steps_of[check.id] if f != step.folder]
            if others and check.id not in seen:
                message = (
                    f"check id {check.id!r} is also a check of {', '.join(others)}: ids are "
                    "unique in the course"
                )
                yield _at(step, "error", ("checks", i, "id"), message)
            seen.add(check.id)


def scenarios_exist(course: LoadedCourse) -> Iterable[Problem]:
    """A step or check names a scenario that steps/scenarios/ does not hold (or that is invalid)."""
    for step, model in _steps(course):
        refs: list[tuple[tuple[str | int, ...], str | None]] = [(("scenario",), model.scenario)]
        refs += [(("checks", i, "scenario"), c.scenario) for i, c in enumerate(model.checks)]
        for loc, name in refs:
            if name is not None and name not in course.scenarios:
                path = course.root / "scenarios" / f"{name}.yaml"
                why = "is not valid" if path.exists() else "does not exist"
                yield _at(step, "error", loc, f"unknown scenario {name!r}: {path} {why}")


def _widget_problem(decision: Decision, spec: DesignField) -> str | None:
    kind = spec.kind
    if decision.widget == "checkbox" and kind != "bool":
        return f"checkbox needs a true/false field; {spec.path} holds {kind}"
    if decision.widget == "number" and kind not in ("int", "float"):
        return f"number needs a numeric field; {spec.path} holds {kind}"
    if (
        decision.widget in ("select", "radio")
        and not decision.choices
        and kind
        not in (
            "choice",
            "bool",
        )
    ):
        return f"{decision.widget} needs choices: {spec.path} is {kind}, list its choices"
    return None


def number(value: float) -> str:
    """A bound as an author writes it, with thousands separators: ``99,999,999`` (not
    ``1e+08``), ``0.5``, ``12,345.5``."""
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{float(value):,}"


def _range_problems(decision: Decision, spec: DesignField) -> list[tuple[str, str]]:
    """(key, message) for a decision's min or max outside the design model's own bound."""
    found = []
    low, high = decision.min, decision.max
    if low is not None and spec.minimum is not None and low < spec.minimum:
        found.append(("min", f"min {number(low)} is below the design's own minimum "
                             f"{number(spec.minimum)} for {decision.field}"))  # fmt: skip
    elif (
        low is not None
        and spec.minimum is not None
        and spec.minimum_exclusive
        and low <= spec.minimum
    ):
        found.append(("min", f"min {number(low)} is not above the design's own exclusive "
                             f"minimum {number(spec.minimum)} for {decision.field} (it must be "
                             f"greater than {number(spec.minimum)})"))  # fmt: skip
    if high is not None and spec.maximum is not None and high > spec.maximum:
        found.append(("max", f"max {number(high)} is above the design's own maximum "
                             f"{number(spec.maximum)} for {decision.field}"))  # fmt: skip
    return [(key, f"{message}: the form would offer values the design refuses")
            for key, message in found]  # fmt: skip


def decisions_fit_design(course: LoadedCourse) -> Iterable[Problem]:
    """Each decision names a real design field, a widget that fits it, valid choice values, and
    a min/max inside the design model's own bounds (the form shows the decision's range and the
    server enforces it, app.web.forms.field_bounds: it must not offer what the design refuses).
    A choice (with its ``also`` values) is validated on the reference design, as a learner
    meets it; an error it causes at another field is left to the form's conflict check."""
    base = course.reference_design or Design()
    for step, model in _steps(course):
        seen: set[str] = set()
        for i, decision in enumerate(model.decisions):
            if decision.field in seen:
                yield _at(step, "error", ("decisions", i, "field"), "field decided twice in step")
            seen.add(decision.field)
            try:
                spec = design_field(decision.field)
            except UnknownField as exc:
                yield _at(step, "error", ("decisions", i, "field"), str(exc))
                continue
            problem = _widget_problem(decision, spec)
            if problem:
                yield _at(step, "error", ("decisions", i, "widget"), problem)
            for key, message in _range_problems(decision, spec):
                yield _at(step, "error", ("decisions", i, key), message)
            for j, choice in enumerate(decision.choices):
                values = {decision.field: choice.value, **choice.also}
                try:
                    for path in choice.also:
                        design_field(path)
                    with_values(base, values)
                except UnknownField as exc:
                    yield _at(step, "error", ("decisions", i, "choices", j, "also"), str(exc))
                except ValidationError as exc:
                    # An error at another field is a combination the form's conflict check
                    # explains to the learner (app.web.conflicts); only the option's own values
                    # must be valid.
                    own = [e for e in exc.errors() if ".".join(str(p) for p in e["loc"]) in values]
                    if own:
                        at = ".".join(str(p) for p in own[0]["loc"])
                        key = "value" if at == decision.field else "also"
                        loc = ("decisions", i, "choices", j, key)
                        text = f"{values[at]!r} for {at}: {own[0]['msg']}"
                        yield _at(step, "error", loc, text)


def checks_well_formed(course: LoadedCourse) -> Iterable[Problem]:
    """Check ids are unique in a step, expressions and explanations parse, each concept names a
    heading of the step's narrative (a dead link is an error: learners follow it)."""
    # Here, not at the top: Markdown is needed only when the rules run, not to import the
    # command line (``designlab --help``, ``schema``).
    from app.course.narrative import heading_anchors

    for step, model in _steps(course):
        anchors = set(heading_anchors(step.narrative))
        counts = Counter(c.id for c in model.checks)
        for i, check in enumerate(model.checks):
            if counts[check.id] > 1:
                yield _at(step, "error", ("checks", i, "id"), f"duplicate check id {check.id!r}")
            if (why := expression_syntax_error(check.expr)) is not None:
                yield _at(step, "error", ("checks", i, "expr"), why)
            if check.needs and (why := expression_syntax_error(check.needs.expr)) is not None:
                yield _at(step, "error", ("checks", i, "needs", "expr"), why)
            if check.needs and (why := template_syntax_error(check.needs.missing)) is not None:
                yield _at(step, "error", ("checks", i, "needs", "missing"), why)
            for field, text in (
                ("explain", check.explain),
                ("pass", check.pass_message),
                ("fail", check.fail_message),
                ("hint", check.hint),
            ):
                if (why := template_syntax_error(text)) is not None:
                    yield _at(step, "error", ("checks", i, field), why)
            if check.concept and check.concept not in anchors:
                known = ", ".join(sorted(anchors)) or "none"
                message = (
                    f"no heading with anchor {check.concept!r} in narrative.md ({known}): the "
                    "check's 'Read' link would lead nowhere"
                )
                yield _at(step, "error", ("checks", i, "concept"), message)
        if model.checks and sum(c.points for c in model.checks) == 0:
            yield _at(step, "warning", ("checks",), "the step's checks are worth 0 points in all")


def course_files_exist(course: LoadedCourse) -> Iterable[Problem]:
    """The pricing catalog and the reference design named in course.yaml are present."""
    if course.course is None:
        return
    files = {"pricing": course.course.pricing, "reference_design": course.course.reference_design}
    for key, name in files.items():
        if not (course.root / name).is_file():
            line = course.course_lines.get((key,))
            yield Problem("warning", str(course.course_file), line, key, f"{name} does not exist")


RULES: list[Rule] = [
    step_ids_unique,
    check_ids_unique,
    scenarios_exist,
    decisions_fit_design,
    checks_well_formed,
    course_files_exist,
    *GRADING_RULES,
    *CHECK_RULES,
]
"""Every rule the loader runs, in order. Append new rules here."""


def run_rules(course: LoadedCourse, rules: Iterable[Rule] | None = None) -> list[Problem]:
    """Every problem the rules find. A rule that raises is reported as an error, not re-raised."""
    found: list[Problem] = []
    for rule in RULES if rules is None else rules:
        try:
            found.extend(rule(course))
        except Exception as exc:  # a broken rule must not take the course down
            message = f"lint rule {rule.__name__} failed: {type(exc).__name__}: {exc}"
            found.append(Problem("error", str(course.course_file), None, "", message))
    return found
