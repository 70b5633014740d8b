"""The grader with the simulator: a scenario shared by two steps is simulated once per grade and
priced with the course's catalog; its metrics, cost and estimate reach the checks and the result."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app.grading.grader import grade, load_material, run_scenario
from simulator import simulate
from simulator.cost import monthly_cost
from simulator.design import Design
from simulator.files import load_design
from simulator.scenario import Scenario

FIXTURE = Path(__file__).parent / "fixtures" / "simulated"


@pytest.fixture(scope="module")
def material():
    return load_material(FIXTURE)


@pytest.fixture(scope="module")
def design() -> Design:
    return load_design(FIXTURE / "designs" / "reference.yaml")


def test_a_shared_scenario_is_simulated_once_per_grade(material, design):
    """Two steps and five checks read the tiny scenario: one simulation, with its own seed 3."""
    calls: list[tuple[str, int]] = []

    def counted(d: Design, scenario: Scenario, seed: int):
        calls.append((scenario.name, seed))
        return simulate(d, scenario, seed)

    result = grade(design, material, simulate=counted)
    assert calls == [("tiny", 3)]
    assert result.status == "pass"
    assert [s.seed for s in result.steps] == [3, 3]


def test_a_given_seed_reaches_every_scenario(material, design):
    """--seed 9 replaces the scenario's own seed and is reported."""
    calls: list[int] = []

    def counted(d: Design, scenario: Scenario, seed: int):
        calls.append(seed)
        return simulate(d, scenario, seed)

    result = grade(design, material, seed=9, simulate=counted)
    assert calls == [9]
    assert result.seed == 9


def test_steps_carry_the_metrics_and_the_priced_month(material, design):
    """The step's metrics are the simulation's; its cost is the month priced with those metrics."""
    result = grade(design, material)
    step = result.steps[0]
    scenario = material.loaded.scenarios["tiny"]
    expected = simulate(design, scenario, 3)
    assert step.metrics == expected.metrics
    assert step.cost == monthly_cost(
        design, scenario, material.pricing, budget_usd=85_000, metrics=expected.metrics
    )
    assert result.cost == step.cost


def test_explanations_show_the_simulated_figures(material, design):
    """The explanation quotes the run's arrivals and the priced tokens."""
    result = grade(design, material)
    nothing_lost, within_budget, estimate = result.steps[0].checks
    arrivals = result.steps[0].metrics.arrivals
    assert nothing_lost.explanation == f"{arrivals:,} step events arrived and 0 were lost."
    assert within_budget.explanation.endswith("model tokens $69,984.")
    assert estimate.explanation.startswith("estimated utilisation ")


def test_run_scenario_prices_the_simulation(material, design):
    """run_scenario is simulate plus the month's cost against the course budget."""
    scenario = material.loaded.scenarios["tiny"]
    result = run_scenario(design, scenario, 3, material)
    assert result.cost is not None
    assert result.cost.budget_usd == 85_000
    assert result.metrics == simulate(design, scenario, 3).metrics


def _zero_agents(design: Design) -> Design:
    agent = design.consumers.agent.model_copy(update={"instances": 0})
    consumers = design.consumers.model_copy(update={"agent": agent})
    return design.model_copy(update={"consumers": consumers})


@pytest.fixture(scope="module")
def refusal_course(tmp_path_factory) -> Path:
    """The fixture course with a check over the model calls: none refused, if any was made."""
    course = tmp_path_factory.mktemp("needs") / "course"
    shutil.copytree(FIXTURE, course)
    step = course / "01-load" / "step.yaml"
    step.write_text(
        step.read_text()
        + """  - id: no-refusals
    title: The provider refuses no call
    points: 2
    needs:
      expr: metrics.model_calls > 0
      missing: no model call was made
    expr: metrics.http_429s == 0
    pass: The provider answered every call.
    fail: The provider answered calls with 429.
    explain: >-
      {{ fmt(metrics.model_calls) }} model calls, {{ fmt(metrics.http_429s) }} answered 429.
"""
    )
    return course


def test_a_check_over_no_model_call_is_not_exercised_and_scores_nothing(refusal_course, design):
    """Zero agent instances make no model call: "0 of 0 refused" is not exercised (0 points,
    the grade fails), where the reference's calls are judged and pass."""
    material = load_material(refusal_course)
    reference = grade(design, material).steps[0].checks[-1]
    assert (reference.status, reference.points) == ("pass", 2)
    result = grade(_zero_agents(design), material)
    check = result.steps[0].checks[-1]
    assert (check.id, check.status, check.points, check.max_points) == (
        "no-refusals",
        "not_exercised",
        0,
        2,
    )
    assert check.message == "Not exercised: no model call was made: nothing to judge."
    assert check.explanation == "0 model calls, 0 answered 429."
    assert result.status == "fail"
    assert ("load", "no-refusals") in result.failed_checks
    assert "(1 not exercised: nothing to judge)" in result.message


def test_a_fail_message_is_computed_from_the_run(refusal_course, design, tmp_path):
    """A check's pass and fail messages are templates over the run's figures, so a failure
    says the number that failed it rather than a fixed sentence."""
    course = tmp_path / "course"
    shutil.copytree(refusal_course, course)
    step = course / "01-load" / "step.yaml"
    step.write_text(
        step.read_text()
        .replace("expr: metrics.http_429s == 0", "expr: metrics.model_calls < 0")
        .replace(
            "fail: The provider answered calls with 429.",
            "fail: '{{ fmt(metrics.model_calls) }} calls made, not fewer than none.'",
        )
    )
    result = grade(design, load_material(course))
    check = result.steps[0].checks[-1]
    assert check.status == "fail"
    calls = result.steps[0].metrics.model_calls
    assert calls > 0
    assert check.message == f"{calls:,} calls made, not fewer than none."


def test_each_check_carries_its_kind(material, design):
    """A check over the run (metrics, cost) is simulated; one over the design or the closed-form
    estimate only is a design review."""
    result = grade(design, material)
    assert [[c.kind for c in s.checks] for s in result.steps] == [
        ["simulated", "simulated", "design_review"],
        ["simulated", "design_review"],
    ]


def test_the_grade_prices_the_design_the_course_judged(material, design):
    """No step of the fixture course decides the state store's replicas: each step judges the
    reference's 2, and so does the bill (it said 0 replicas, cheaper than what the checks saw
    passing the failover), from the same run; the grade lists the field it did not judge."""
    store = design.state_store.model_copy(update={"replicas": 0})
    mine = design.model_copy(update={"state_store": store})
    calls: list[int] = []

    def counted(d: Design, scenario: Scenario, seed: int):
        calls.append(d.state_store.replicas)
        return simulate(d, scenario, seed)

    result = grade(mine, material, simulate=counted)
    assert calls == [2]
    assert result.cost is not None and result.steps[0].cost is not None
    assert result.cost == result.steps[0].cost
    assert result.cost.by_component["database_replicas"] > 0
    assert result.not_judged == ["state_store.replicas: 0 in the file, 2 judged"]
    part = grade(mine, material, only=material.loaded.steps[:1])
    assert part.cost is None
