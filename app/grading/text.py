"""The grade result as a readable table for a terminal or a CI log.

One line per step (status, number, title, points), one line per check under it; a check that did
not pass adds its message, the explanation in the learner's numbers ("why"), the hint and where
the step teaches it. Then the monthly cost against the budget and the total.
"""

from __future__ import annotations

import textwrap

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


def _check_lines(step: StepResult, check: CheckResult) -> list[str]:
    status = "idle" if check.status == "not_exercised" else check.status
    head = f"    {status:<5}  {check.title:<70.70} {check.points:>3}/{check.max_points:<3}"
    lines = [head.rstrip()]
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
    return lines


def _cost_lines(cost: Cost) -> list[str]:
    spare = cost.budget_usd - cost.monthly_usd
    share = abs(spare) / cost.budget_usd * 100 if cost.budget_usd else 0.0
    verdict = f"{share:.1f} % under" if spare >= 0 else f"{share:.1f} % OVER"
    lines = [f"Monthly cost {usd(cost.monthly_usd)} of {usd(cost.budget_usd)} budget ({verdict})"]
    for component, dollars in sorted(cost.by_component.items(), key=lambda kv: (-kv[1], kv[0])):
        if dollars:
            lines.append(f"    {component:<26} {usd(dollars):>10}")
    return lines


def to_text(result: GradeResult) -> str:
    """The result as a plain-text report (lines of at most about 100 characters)."""
    seed = "each scenario's own seed" if result.seed is None else f"seed {result.seed}"
    lines = [
        f"designlab grade: {result.design_name or 'design'} "
        f"(course {result.course or '?'}, simulator {result.simulator_version}, {seed})",
        "",
    ]
    for problem in result.errors:
        lines += _wrapped("", str(problem), 0)
    for number, step in enumerate(result.steps, start=1):
        mark = _MARK[step.status]
        head = f"{mark:<5} {number:>2}  {step.title:<72.72} {step.points:>3}/{step.max_points:<3}"
        lines.append(head.rstrip())
        if step.message:
            lines += _wrapped("note", step.message, 11)
        for check in step.checks:
            lines += _check_lines(step, check)
    if result.cost is not None:
        lines += ["", *_cost_lines(result.cost)]
    lines += [
        "",
        f"Result: {_MARK[result.status]}  {result.points}/{result.max_points} points "
        f"(score {result.score:.2f})",
        *_wrapped("", result.message, 0),
    ]
    return "\n".join(lines) + "\n"
