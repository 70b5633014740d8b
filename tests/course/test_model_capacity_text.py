"""Step 5's model-capacity text gives the peak's requests and tokens a minute from the load, not
from the simulation's utilisation x capacity (rounded to 6 digits each): 10 calls/s of 1,800
tokens are 600 requests and 1,080,000 tokens a minute, never 1,080,003."""

from __future__ import annotations

from pathlib import Path

from app.checks.explanations import render_explanation
from app.grading.grader import load_material
from simulator.estimate import estimate
from simulator.files import load_design
from simulator.result import GroupMetrics, Metrics

STEPS = Path(__file__).resolve().parents[2] / "steps"


def test_the_peaks_tokens_a_minute_are_exact():
    material = load_material(STEPS)
    step = material.loaded.step("agents-tools-model")
    (check,) = [c for c in step.step.checks if c.id == "model-capacity"]
    design = load_design(STEPS / material.course.reference_design)
    scenario = material.loaded.scenarios[step.step.scenario]
    # As the simulation reports a 540 RPM design: 6 significant digits of each figure.
    agent = GroupMetrics.model_construct(
        arrivals=36_000,
        processed=36_000,
        capacity_eps=11.6667,
        utilisation=0.857145,
        limits_utilisation={"RPM": 0.857145, "TPM": 0.54, "provider concurrency": 0.6},
        mean_step_s=2.0,
    )
    metrics = Metrics.model_construct(
        by_group={"agent": agent},
        model_wait_mean_s=0.54,
        model_wait_without_relay_mean_s=0.54,
    )
    names = {
        "design": design,
        "scenario": scenario,
        "metrics": metrics,
        "estimate": estimate(design, scenario),
    }
    fail = render_explanation(check.fail_message, names)
    assert fail.endswith("the peak makes 600 requests and 1,080,000 tokens a minute on average.")
