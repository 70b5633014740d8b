"""What a check judges: a consequence the simulation shows, or the design's structure.

- ``simulated``: the check's ``expr`` reads the run (``metrics`` or ``cost``) and nothing of the
  design: its verdict is a figure of the simulation, compared with a threshold from the scenario
  or the run itself.
- ``design_review``: the check's ``expr`` reads the design's values only (an API status code, a
  table's unique key): a review of the structure, shown as such, and at most
  :data:`DESIGN_REVIEW_MAX_SHARE` of the course's points (course lint).
"""

from __future__ import annotations

from typing import Literal

from app.checks.expressions import names_used

CheckKind = Literal["simulated", "design_review"]

RUN_NAMES = frozenset({"metrics", "cost", "baseline_cost"})
"""The names through which an expression reads the simulation."""

DESIGN_REVIEW_MAX_SHARE = 0.20
"""The largest share of a course's points its design-review checks may carry (issue 15)."""


def check_kind(expr: str) -> CheckKind:
    """``simulated`` when ``expr`` reads ``metrics`` or ``cost`` (or ``baseline_cost``), else
    ``design_review``. Raises SyntaxError when it does not parse."""
    return "simulated" if names_used(expr) & RUN_NAMES else "design_review"
