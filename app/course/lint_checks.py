"""Course lint rules for what a check judges and what its messages say (issue 15).

- A simulated check's verdict is a figure of the run: its ``expr`` reads ``metrics`` or ``cost``
  and nothing of the design (a threshold comes from the scenario or the run itself), so the
  simulation, not the design file, decides it (app.checks.kinds).
- Design-review checks (``expr`` over the design only) carry at most 20 % of the course's points.
- Every message is computed from the run: a simulated check's ``pass`` and ``fail`` read a figure
  of the run (``metrics``, ``cost`` or ``estimate``), a design review's read the design value it
  judges, so no fixed sentence can contradict the numbers beside it.

They are warnings: a step that breaks them still runs and grades (its verdicts are sound; what
it says or weighs is not up to the course's standard), and ``designlab lint`` and the instructor's
page list them. This course's own content is held to none (tests/course/test_content.py).
"""

from __future__ import annotations

from collections.abc import Iterable

from jinja2 import TemplateSyntaxError

from app.checks.explanations import template_names
from app.checks.expressions import names_used
from app.checks.kinds import DESIGN_REVIEW_MAX_SHARE, RUN_NAMES, check_kind
from app.course.content import LoadedCourse, LoadedStep, Problem, linted_steps
from app.course.models import Check


def _warning(step: LoadedStep, loc: tuple[str | int, ...], message: str) -> Problem:
    return step.problem("warning", loc, message)


def _checks(course: LoadedCourse) -> Iterable[tuple[LoadedStep, int, Check]]:
    for step, model in linted_steps(course):
        for i, check in enumerate(model.checks):
            yield step, i, check


def simulated_checks_read_no_design(course: LoadedCourse) -> Iterable[Problem]:
    """A check that reads the run decides on the run alone: its expr reads no ``design`` value
    (put a design value in the explanation, or make the clause a design review of its own)."""
    for step, i, check in _checks(course):
        try:
            used = names_used(check.expr)
        except SyntaxError:
            continue
        if used & RUN_NAMES and "design" in used:
            yield _warning(
                step,
                ("checks", i, "expr"),
                "a simulated check's verdict must come from the run: the expr reads design "
                "values too (judge their consequence in the run, or review them in a check "
                "of their own)",
            )


def design_review_share(course: LoadedCourse) -> Iterable[Problem]:
    """Design-review checks carry at most DESIGN_REVIEW_MAX_SHARE of the course's points."""
    total = reviewed = 0
    for _, _, check in _checks(course):
        total += check.points
        try:
            if check_kind(check.expr) == "design_review":
                reviewed += check.points
        except SyntaxError:
            continue
    if total and reviewed > DESIGN_REVIEW_MAX_SHARE * total:
        yield Problem(
            "warning",
            str(course.course_file),
            None,
            "steps",
            f"design-review checks carry {reviewed} of {total} points "
            f"({100 * reviewed / total:.0f} %), more than "
            f"{100 * DESIGN_REVIEW_MAX_SHARE:.0f} %: judge more decisions by their simulated "
            "consequence",
        )


def messages_from_the_run(course: LoadedCourse) -> Iterable[Problem]:
    """A check's pass and fail messages are computed: a simulated check's read a figure of the
    run (metrics, cost or estimate), a design review's the design value it judges."""
    for step, i, check in _checks(course):
        try:
            kind = check_kind(check.expr)
        except SyntaxError:
            continue
        wanted = RUN_NAMES | {"estimate"} if kind == "simulated" else frozenset({"design"})
        what = "a figure of the run" if kind == "simulated" else "the design value it reviews"
        for field, text in (("pass", check.pass_message), ("fail", check.fail_message)):
            try:
                read = template_names(text)
            except TemplateSyntaxError:
                continue
            if not read & wanted:
                yield _warning(
                    step,
                    ("checks", i, field),
                    f"the {field} message is a fixed sentence: it must show {what} "
                    f"({', '.join(sorted(wanted))}), so it cannot contradict the numbers beside it",
                )


RULES = [simulated_checks_read_no_design, design_review_share, messages_from_the_run]
"""The check-kind and message rules, for app.course.lint's RULES."""
