"""Which metrics are judged over a set that can be empty, and the count that says it is not.

A check over an empty set proves nothing: "0 of 0 model calls were refused" is not a provider
that never refuses, and "no effect ran twice" after nothing was processed is not dedupe. Such a
check declares what it needs in ``needs`` (``app.course.models.Needs``): an expression evaluated
before the check; when it is false the check is *not exercised* and scores 0. Lint requires a
``needs`` that reads the set's count for every check whose ``expr`` reads a metric of
:data:`EXERCISED_BY`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from app.checks.expressions import parse

EXERCISED_BY: dict[str, str] = {
    # Counted over the model calls that were made.
    "model_calls_repeated": "model_calls",
    "tokens": "model_calls",
    "tokens_repeated": "model_calls",
    "http_429s": "model_calls",
    "fallback_calls": "model_calls",
    "cache_hits": "model_calls",
    "wrong_model_version_served": "model_calls",
    # Counted over the step events that were processed (latency over none is no latency; an
    # effect that never ran cannot run twice, nor out of order).
    "latency_p50_s": "processed",
    "latency_p95_s": "processed",
    "latency_p99_s": "processed",
    "latency_mean_s": "processed",
    "wait_mean_s": "processed",
    "duplicate_effects": "processed",
    "order_violations": "processed",
    "lost": "processed",
    "state_writes_lost": "processed",
    # Counted over the flaky events met (an event that failed once with an error that clears).
    "flaky_given_up": "flaky_events",
    "flaky_recovered": "flaky_events",
}
"""Metric -> the count of the set it is judged over (a metric of the same level: top-level, or
the same consumer group's in ``metrics.by_group[...]``)."""


@dataclass(frozen=True)
class MetricRead:
    """One metric an expression reads: ``group`` is None for a top-level metric
    (``metrics.lost``), else the consumer group's name (``metrics.by_group["agent"].processed``)."""

    group: str | None
    name: str

    def sort_key(self) -> tuple[str, str]:
        """Top-level metrics first, then by group; by name within each."""
        return (self.group or "", self.name)

    def __str__(self) -> str:
        if self.group is None:
            return f"metrics.{self.name}"
        return f'metrics.by_group["{self.group}"].{self.name}'


def _group_of(node: ast.expr) -> str | None | bool:
    """``metrics`` -> None; ``metrics.by_group["g"]`` -> "g"; anything else -> False."""
    if isinstance(node, ast.Name) and node.id == "metrics":
        return None
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "by_group"
        and isinstance(node.value.value, ast.Name)
        and node.value.value.id == "metrics"
        and isinstance(node.slice, ast.Constant)
        and isinstance(node.slice.value, str)
    ):
        return node.slice.value
    return False


def metrics_read(expr: str) -> frozenset[MetricRead]:
    """Every metric ``expr`` reads as ``metrics.X`` or ``metrics.by_group["g"].X``.

    Raises SyntaxError when ``expr`` does not parse.
    """
    found: set[MetricRead] = set()
    for node in ast.walk(parse(expr)):
        if isinstance(node, ast.Attribute):
            group = _group_of(node.value)
            if group is not False and node.attr != "by_group":
                found.add(MetricRead(group if isinstance(group, str) else None, node.attr))
    return frozenset(found)


def counts_needed(expr: str) -> frozenset[MetricRead]:
    """The counts a ``needs`` expression must read for a check whose expression is ``expr``:
    for each metric of :data:`EXERCISED_BY` it reads, that metric's count at the same level.

    Raises SyntaxError when ``expr`` does not parse.
    """
    return frozenset(
        MetricRead(read.group, EXERCISED_BY[read.name])
        for read in metrics_read(expr)
        if read.name in EXERCISED_BY
    )
