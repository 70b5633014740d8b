"""The bill's groups, and step 7's budget check naming the largest one: the state store when
its write capacity dominates the bill, tokens when they do, each with the hint that moves it."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.checks.cost_groups import cost_groups
from app.checks.explanations import render_explanation
from app.grading.grader import load_material
from simulator.result import Cost, GroupMetrics, Metrics

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


PEAK = load_material(STEPS).loaded.scenarios["peak"]
PLANNED_TOKENS = PEAK.load.fan_out.model_calls * (
    PEAK.load.tokens.input_per_call + PEAK.load.tokens.output_per_call
)


def _metrics(tokens_per_run: float, slots_busy: float = 0.2) -> Metrics:
    agent = GroupMetrics.model_construct(limits_utilisation={"instances x concurrency": slots_busy})
    return Metrics.model_construct(tokens_per_run=tokens_per_run, by_group={"agent": agent})


def _texts(check, cost: Cost, metrics: Metrics | None = None) -> tuple[str, str]:
    names = {
        "cost": cost,
        "budget_usd": cost.budget_usd,
        "scenario": PEAK,
        "metrics": metrics or _metrics(PLANNED_TOKENS),
    }
    return render_explanation(check.explain, names), render_explanation(check.hint, names)


def test_a_bill_of_machines_names_the_state_store_and_its_write_capacity(within_budget):
    explanation, hint = _texts(within_budget, MACHINES)
    assert "The largest part is the state store, $5,184,000 (87 %)" in explanation
    assert "Tokens" not in explanation
    assert hint == (
        "Lower the state store's write capacity toward twice the peak's writes: its $5,184,000 "
        "is paid on the primary and on every replica."
    )


def test_a_bill_of_tokens_on_plan_points_at_the_machines_beside_them(within_budget):
    """Tokens are most of every bill, priced at the plan: with no fan-out past it and no paid
    repeats the hint names the machines (it said "stop paid repeats and runaway fan-out" to a
    design with 103 agent instances, $12,607 of workers 2 % busy)."""
    explanation, hint = _texts(within_budget, TOKENS)
    assert "The largest part is tokens, with paid repeats, $70,016 (95 %)" in explanation
    assert hint == (
        "Fewer worker instances ($979; the agent workers' slots are 20 % busy at the peak): "
        "enough slots for the busy partitions with headroom."
    )


def test_fan_out_past_the_plan_and_paid_repeats_are_named_before_machines(within_budget):
    _, hint = _texts(within_budget, TOKENS, _metrics(1.6 * PLANNED_TOKENS))
    assert hint == (
        "A run spends 160 % of the planned tokens: cap the fan-out (step 6) before trimming "
        "machines."
    )
    repeats = TOKENS.model_copy(
        update={"by_component": {**TOKENS.by_component, "repeats_steady": 1_200}}
    )
    _, hint = _texts(within_budget, repeats)
    assert hint == (
        "Model calls paid twice cost $1,200: stop the repeats (steps 4 and 5) before trimming "
        "machines."
    )
