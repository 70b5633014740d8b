"""The bill's groups, and step 7's budget check naming the largest one: the state store when
its write capacity dominates the bill, tokens when they do, each with the hint that moves it."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.checks.cost_groups import cost_groups
from app.checks.explanations import render_explanation
from app.grading.grader import load_material
from simulator.result import Cost

STEPS = Path(__file__).resolve().parents[2] / "steps"

MACHINES = Cost(
    monthly_usd=5_979_552,
    budget_usd=85_000,
    by_component={
        "database_replicas": 3_456_000,
        "database_primary": 1_728_000,
        "tool_runners": 599_040,
        "workers_agent": 125_338,
        "model_tokens": 69_984,
        "repeats_worker_crashes": 1_190,
    },
)
TOKENS = Cost(
    monthly_usd=73_430,
    budget_usd=85_000,
    by_component={"model_tokens": 69_984, "repeats_steady": 32, "workers_agent": 979},
)


def test_groups_add_their_components_largest_first():
    assert cost_groups(MACHINES) == [
        ("state_store", "the state store", 5_184_000),
        ("tool_runners", "tool runners", 599_040),
        ("workers", "worker instances", 125_338),
        ("tokens", "tokens, with paid repeats", 71_174),
    ]
    assert cost_groups(TOKENS)[0] == ("tokens", "tokens, with paid repeats", 70_016)


def test_a_group_names_the_lines_it_adds_to_its_main_one():
    """Step 7's budget text listed "model tokens $69,984" and then "the largest part is tokens,
    $70,016": the $32 of the fallback added silently. The label says what the group holds."""
    cost = Cost(
        monthly_usd=73_190,
        budget_usd=85_000,
        by_component={
            "model_tokens": 69_984,
            "fallback_provider": 32.4,
            "repeats_deploys": 0.0,
            "brokers": 907.2,
            "broker_storage": 4.01,
            "workers_agent": 979.2,
        },
    )
    assert cost_groups(cost)[:3] == [
        ("tokens", "tokens, with the fallback's", 70_016.4),
        ("workers", "worker instances", 979.2),
        ("brokers", "brokers, with their storage", 911.21),
    ]
    only = Cost(monthly_usd=69_984, budget_usd=85_000, by_component={"model_tokens": 69_984})
    assert cost_groups(only)[0] == ("tokens", "tokens", 69_984)


@pytest.fixture(scope="module")
def within_budget():
    step = load_material(STEPS).loaded.step("evening-peak")
    assert step is not None and step.step is not None
    (check,) = [c for c in step.step.checks if c.id == "within-budget"]
    return check


def _texts(check, cost: Cost) -> tuple[str, str]:
    names = {"cost": cost, "budget_usd": cost.budget_usd}
    return render_explanation(check.explain, names), render_explanation(check.hint, names)


def test_a_bill_of_machines_names_the_state_store_and_its_write_capacity(within_budget):
    explanation, hint = _texts(within_budget, MACHINES)
    assert "The largest part is the state store, $5,184,000 (87 %)" in explanation
    assert "Tokens" not in explanation
    assert hint.startswith("Lower the state store's write capacity")
    assert "(step 7)" in hint


def test_a_bill_of_tokens_names_tokens_and_the_repeats(within_budget):
    explanation, hint = _texts(within_budget, TOKENS)
    assert "The largest part is tokens, with paid repeats, $70,016 (95 %)" in explanation
    assert hint == "Stop paid repeats and runaway fan-out (steps 5 and 6) before trimming machines."
