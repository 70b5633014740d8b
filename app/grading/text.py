"""The grade result as a readable table for a terminal or a CI log.

One line per step (status, number, title, points), one line per check under it (a title longer
than its column goes on under itself, whole: nothing is cut); a check that did not pass adds its
message, the explanation in the learner's numbers ("why"), the hint and where
the step teaches it. Then the monthly cost against the budget and the total.
"""

from __future__ import annotations

import textwrap

from app.control_characters import printable
from app.grading.result import CheckResult, GradeResult, StepResult
from simulator.cost import usd
from simulator.result import Cost

WIDTH = 100
_MARK = {"pass": "PASS", "fail": "FAIL", "error": "ERROR"}


def _wrapped(label: str, text: str, indent: int) -> list[str]:
    prefix = " " * indent + (f"{label}: " if label else "")
    lines = textwrap.wrap(
        text,
        WIDTH,
        initial_indent=prefix,
        subsequent_indent=" " * (indent + 2),
        break_on_hyphens=False,
    )
    return lines or [prefix.rstrip()]


def _titled(prefix: str, title: str, width: int, points: str) -> list[str]:
    """``prefix``, ``title`` padded to ``width`` characters, then ``points``; a longer title is
    wrapped, whole, onto the following lines under its first (never cut)."""
    parts = textwrap.wrap(title, width, break_on_hyphens=False) or [""]
    lines = [f"{prefix}{parts[0]:<{width}} {points}".rstrip()]
    return lines + [" " * len(prefix) + part for part in parts[1:]]


def _check_lines(step: StepResult, check: CheckResult) -> list[str]:
    status = "idle" if check.status == "not_exercised" else check.status
    points = f"{check.points:>3}/{check.max_points:<3}"
    lines = _titled(f"    {status:<5}  ", check.title, 70, points)
    if check.status == "pass":
        return lines
    lines += _wrapped("", check.message, 11)
    if check.explanation:
        lines += _wrapped("why", check.explanation, 11)
    if check.hint:
        lines += _wrapped("hint", check.hint, 11)
    if check.concept:
        lines.append(f"           read: {step.id}#{check.concept}")
    lines.append(f"           check: {step.id}/{check.id}")
    if check.scenario:
        lines.append(f"           scenario: {check.scenario}")
    return lines


def _cost_lines(cost: Cost, scenario: str | None) -> list[str]:
    spare = cost.budget_usd - cost.monthly_usd
    share = abs(spare) / cost.budget_usd * 100 if cost.budget_usd else 0.0
    verdict = f"{share:.1f} % under" if spare >= 0 else f"{share:.1f} % OVER"
    priced = f", a month of the {scenario} scenario's load" if scenario else ""
    lines = [
        f"Monthly cost {usd(cost.monthly_usd)} of {usd(cost.budget_usd)} budget ({verdict}){priced}"
    ]
    for component, dollars in sorted(cost.by_component.items(), key=lambda kv: (-kv[1], kv[0])):
        if dollars:
            lines.append(f"    {component:<26} {usd(dollars):>10}")
    return lines


def to_text(result: GradeResult) -> str:
    """The result as a plain-text report (lines of at most about 100 characters); a control
    character (from a design's name, say) is shown as an escape such as ``\\x1b``, so it can
    neither break a line nor drive the terminal."""
    seed = "each scenario's own seed" if result.seed is None else f"seed {result.seed}"
    lines = [
        f"designlab grade: {result.design_name or 'design'} "
        f"(course {result.course or '?'}, simulator {result.simulator_version}, {seed})",
        "",
    ]
    for problem in result.errors:
        lines += _wrapped("", str(problem), 0)
    if result.not_judged:
        lines += _wrapped(
            "",
            "No step of the course decides these fields, so every step and the bill use the "
            "course's value instead of the file's:",
            0,
        )
        lines += [f"    {line}" for line in result.not_judged] + [""]
    for place, step in enumerate(result.steps, start=1):
        number = step.number or place
        mark = _MARK[step.status]
        points = f"{step.points:>3}/{step.max_points:<3}"
        lines += _titled(f"{mark:<5} {number:>2}  ", step.title, 72, points)
        if step.message:
            lines += _wrapped("note", step.message, 11)
        for check in step.checks:
            lines += _check_lines(step, check)
    if result.cost is not None:
        lines += ["", *_cost_lines(result.cost, result.cost_scenario)]
    lines += [
        "",
        f"Result: {_MARK[result.status]}  {result.points}/{result.max_points} points "
        f"(score {'unknown' if result.score is None else format(result.score, '.2f')})",
        *_wrapped("", result.message, 0),
    ]
    return printable("\n".join(lines)) + "\n"
