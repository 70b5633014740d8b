"""Step 13's finished-within-budget judges what the decisions after step 7 add to the month
(app.grading.grader: a check's ``baseline_step``): step 7 prices the peak with the later steps at
neutral values, so a later decision that costs money is judged here, and a month step 7 already
found over budget is not judged twice."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.course.design_fields import with_values
from app.grading.grader import CourseMaterial, grade, load_material
from app.grading.result import CheckResult
from simulator.design import Design
from simulator.files import load_design

STEPS = Path(__file__).resolve().parents[2] / "steps"


@pytest.fixture(scope="module")
def material() -> CourseMaterial:
    return load_material(STEPS)


def _short_poll_interval() -> Design:
    """The reference with max.poll.interval.ms 1 s (the form's least) against 2 s agent calls:
    members are kicked all through the peak and their calls run again. Not a known-bad design of
    the course: its storm during the provider outage fails step 13's fallback check on some seeds
    and not others (the fallback's mean wait 0.006-164 s over seeds 1-10)."""
    return with_values(
        load_design(STEPS / "designs" / "reference.yaml"),
        {"consumers.agent.max_poll_interval_ms": 1000},
    )


def _checks(material: CourseMaterial, design: Design) -> dict[str, CheckResult]:
    result = grade(design, material, seed=1)
    return {c.id: c for s in result.steps for c in s.checks}


def test_a_later_decision_that_takes_the_month_over_fails_here_not_in_step_7(material):
    checks = _checks(material, _short_poll_interval())
    assert checks["within-budget"].status == "pass"
    finished = checks["finished-within-budget"]
    assert finished.status == "fail" and finished.scenario == "peak"
    assert "over the $85,000 budget" in finished.message
    assert "the decisions after step 7 add $" in finished.message
    assert "model calls repeated in the peak's own run +$" in finished.explanation
    assert "max.poll.interval.ms (step 9)" in finished.hint


def test_a_month_step_7_found_over_budget_is_not_judged_again(material):
    checks = _checks(material, load_design(STEPS / "designs" / "bad" / "peer-agents-no-cap.yaml"))
    assert checks["within-budget"].status == "fail"
    finished = checks["finished-within-budget"]
    assert finished.status == "pass"
    assert "add nothing to the month" in finished.message
    assert "which step 7 already found over the $85,000 budget" in finished.message


def test_a_run_of_step_13_alone_simulates_step_7s_design_too(material):
    """The browser runs one step: its runs include the baseline's (app.step_runs.wanted_runs)."""
    from app.course.step_design import step_design
    from app.grading.grader import design_sha256
    from app.step_runs import wanted_runs

    design = _short_poll_interval()
    last = material.loaded.steps[-1]
    seventh = next(s for s in material.loaded.steps if s.number == 7)
    runs = wanted_runs(design, material, [last])
    base = step_design(material.loaded, seventh, design)
    assert (design_sha256(base), "peak") in runs
    assert (design_sha256(step_design(material.loaded, last, design)), "peak") in runs
