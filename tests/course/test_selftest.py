"""The course self-test: graded through the simulator, the reference design passes every check
with full marks and 10-20 % of the budget to spare, and each known-bad design fails exactly the
checks course.yaml lists for it, each with an explanation in the design's own numbers."""

from __future__ import annotations

from functools import cache

import pytest

from app.grading.grader import CourseMaterial, load_material
from app.grading.selftest import SelfTestOutcome, self_test
from simulator.cost import monthly_cost
from tests.course.conftest import STEPS_DIR

simulator = pytest.importorskip("simulator")
if not hasattr(simulator, "simulate"):  # the core is built alongside the course
    pytest.skip("simulator.simulate is not available yet", allow_module_level=True)


@cache
def _material() -> CourseMaterial:
    return load_material(STEPS_DIR)


def _files() -> list[str]:
    course = _material().course
    return [course.reference_design] + [bad.file for bad in course.known_bad]


@cache
def _outcomes() -> dict[str, SelfTestOutcome]:
    """Every design graded once (reference first), by file."""
    return {outcome.file: outcome for outcome in self_test(_material())}


def _graded(file: str) -> SelfTestOutcome:
    return _outcomes()[file]


@pytest.mark.parametrize("file", _files())
def test_design_fails_exactly_its_checks(file: str):
    outcome = _graded(file)
    if not outcome.ok:
        pytest.fail(str(outcome))


@pytest.mark.parametrize("file", [f for f in _files() if "/bad/" in f])
def test_failed_checks_explain_in_the_designs_numbers(file: str):
    outcome = _graded(file)
    assert outcome.result is not None
    for step in outcome.result.steps:
        for check in step.checks:
            if check.status == "fail":
                assert any(ch.isdigit() for ch in check.explanation), f"{step.id}/{check.id}"
            elif check.status != "pass":
                # a check its scenario could not exercise for this design says what was missing
                # (committing before the work redelivers no tool call for step 10 to judge)
                assert check.status == "not_exercised", f"{step.id}/{check.id}: {check.message}"
                assert check.message.startswith("Not exercised: "), f"{step.id}/{check.id}"


def test_reference_keeps_ten_to_twenty_percent_of_the_budget():
    material = _material()
    loaded = material.loaded
    assert loaded.reference_design is not None
    budget = material.course.budget_usd
    for name, scenario in loaded.scenarios.items():
        if scenario.load.runs_per_second is None:
            continue  # a single-stage exercise, not a month of the product
        cost = monthly_cost(loaded.reference_design, scenario, material.pricing, budget_usd=budget)
        assert 0.80 * budget <= cost.monthly_usd <= 0.90 * budget, (name, cost.monthly_usd)
