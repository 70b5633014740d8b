"""No decision without a consequence: steps/consequences.yaml, checked with a few seeds.

Each row names a decision, a wrong value, a course scenario and the metric that the wrong value
must make worse on every seed. scripts/consequences.py checks seeds 1-20 (the figures quoted in
release notes); this suite checks seeds 1-3, so a model change that silences a decision fails
here. Every decision a step teaches must have a row in its step, but those only a design review
judges (what the simulation cannot run: an API's status codes, an owner for the dead-letter topic).
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

import pytest
import yaml

from app.checks.kinds import check_kind
from simulator.design import Design
from simulator.result import Metrics

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("consequences", REPO / "scripts" / "consequences.py")
assert _spec is not None and _spec.loader is not None
consequences = importlib.util.module_from_spec(_spec)
sys.modules["consequences"] = consequences  # its dataclasses look their module up
_spec.loader.exec_module(consequences)

SEEDS = (1, 2, 3)


def _design_paths(expr: str) -> set[str]:
    """Dotted design fields an expression reads: ``design.api.start_status_code`` ->
    ``api.start_status_code``."""
    found = set()
    for node in ast.walk(ast.parse(expr, mode="eval")):
        chain = []
        while isinstance(node, ast.Attribute):
            chain.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id == "design" and chain:
            found.add(".".join(reversed(chain)))
    # ast.walk meets design.a.b and then its part design.a: keep the whole paths
    return {p for p in found if not any(q.startswith(p + ".") for q in found)}


def _taught() -> tuple[list[tuple[str, str]], set[str]]:
    """Every (step folder, decision field) of the course, and the fields a design-review check
    judges (their consequence is outside the simulation: an API's status codes, an owner for
    the dead-letter topic)."""
    course = yaml.safe_load((REPO / "steps" / "course.yaml").read_text("utf-8"))
    taught, reviewed = [], set()
    for folder in course["steps"]:
        step = yaml.safe_load((REPO / "steps" / folder / "step.yaml").read_text("utf-8"))
        taught += [(folder, d["field"]) for d in step["decisions"]]
        for check in step["checks"]:
            if check_kind(check["expr"]) == "design_review":
                reviewed |= _design_paths(check["expr"])
    return taught, reviewed


TAUGHT, REVIEWED = _taught()
MUST_SHOW = [(folder, field) for folder, field in TAUGHT if field not in REVIEWED]
"""Decisions the course teaches, each with its step, that must move a simulated metric: every
decision of every step but those only a design review judges."""

ROWS = consequences.decisions()
REFERENCE = yaml.safe_load((REPO / "steps" / "designs" / "reference.yaml").read_text("utf-8"))


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.decision)
def test_a_row_names_real_fields_a_course_scenario_and_a_metric(row):
    Design.model_validate(consequences.with_values(REFERENCE, row.wrong))
    assert (REPO / "steps" / "scenarios" / f"{row.scenario}.yaml").is_file(), row.scenario
    head = row.metric.split(".")[0]
    assert head in Metrics.model_fields, f"{row.metric} is not a metric"
    assert (REPO / "steps" / row.step).is_dir(), row.step


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.decision)
def test_the_wrong_value_makes_its_metric_worse_on_every_seed(row):
    for seed in SEEDS:
        right, wrong = consequences.measure(row, seed)
        assert consequences.shows(row, right, wrong), (
            f"{row.decision}: {row.metric} is {right:g} for the reference and {wrong:g} for "
            f"{row.wrong} at seed {seed} ({row.worse} is worse)"
        )


def test_design_reviews_judge_only_what_the_simulation_cannot():
    assert {
        "api.start_status_code",
        "api.idempotency_key_source",
        "api.missing_key_status",
        "api.key_reuse_different_payload_status",
        "api.key_in_progress_status",
        "failures.dead_letter_queue.alert_on_depth",
    } >= REVIEWED


@pytest.mark.parametrize("taught", MUST_SHOW, ids=lambda t: t[1])
def test_every_decision_the_course_teaches_has_a_row_in_its_step(taught):
    folder, field = taught
    assert any(row.decision == field and row.step == folder for row in ROWS), (
        f"{field} (step {folder}) has no row in steps/consequences.yaml"
    )
