"""Step 7's worker check says how an outage's backlog drains from the run's own figures: at or
above 100 % of what the agent group can take it never drains, as the live estimate of the same
design says; below, it drains slowly."""

from __future__ import annotations

from pathlib import Path

from app.checks.explanations import render_explanation
from app.grading.grader import grade, load_material
from simulator.design import Design
from simulator.estimate import estimate
from simulator.files import load_design
from simulator.result import GroupMetrics, Metrics

STEPS = Path(__file__).resolve().parents[2] / "steps"


def test_an_overloaded_peak_never_drains_in_the_check_and_the_estimate():
    material = load_material(STEPS)
    step = material.loaded.step("evening-peak")
    assert step is not None
    reference = load_design(STEPS / material.course.reference_design)
    design = Design.model_validate(
        reference.model_dump(mode="json")
        | {"event_log": {**reference.event_log.model_dump(mode="json"), "partitions": 8}}
    )
    (result,) = grade(design, material, only=[step]).steps
    (check,) = [c for c in result.checks if c.id == "peak-utilisation"]
    assert check.status == "fail"
    assert "never drains" in check.message
    assert "drains slowly" not in check.message
    assert "247 % busy at the peak: 10.0 model calls/s are due against 4.0/s" in check.message
    agent = estimate(design, material.loaded.scenarios["peak"]).by_group["agent"]
    assert agent.capacity_eps <= agent.arrivals_eps, "the live estimate says never drains too"


def _agent(partitions: float, utilisation: float) -> Metrics:
    group = GroupMetrics.model_construct(
        utilisation=utilisation,
        capacity_eps=10.0 / utilisation,
        limits_utilisation={"partitions": partitions, "instances x concurrency": 0.2},
    )
    return Metrics.model_construct(by_group={"agent": group})


def _names(material, metrics: Metrics) -> dict:
    """What grading gives the check: the design, and the estimate whose arrivals are the model
    calls due (10/s at the reference's peak)."""
    design = load_design(STEPS / material.course.reference_design)
    return {
        "metrics": metrics,
        "design": design,
        "estimate": estimate(design, material.loaded.scenarios["peak"]),
    }


def test_a_busy_peak_below_capacity_drains_slowly():
    material = load_material(STEPS)
    step = material.loaded.step("evening-peak")
    assert step is not None and step.step is not None
    (check,) = [c for c in step.step.checks if c.id == "peak-utilisation"]
    slow = render_explanation(check.fail_message, _names(material, _agent(0.83, 0.83)))
    assert slow.endswith(
        "are 83 % busy at the peak: queues grow and an outage's backlog drains slowly."
    )
    full = render_explanation(check.fail_message, _names(material, _agent(1.0, 1.0)))
    assert full.endswith(
        "100 % busy at the peak: 10.0 model calls/s are due against 10.0/s the workers can take, "
        "so the queue grows for as long as the peak lasts and an outage's backlog never drains."
    )


def test_a_model_limit_above_busy_workers_is_named_in_the_rate_it_allows():
    """Workers 89 % busy and TPM 270 % used: the rate the calls are due against is what the TPM
    allows (the step-5 limit, judged there), and the workers' own rate is said beside it, so 10.0
    against 3.7/s is not read as the workers' 89 %."""
    material = load_material(STEPS)
    step = material.loaded.step("evening-peak")
    assert step is not None and step.step is not None
    (check,) = [c for c in step.step.checks if c.id == "peak-utilisation"]
    group = GroupMetrics.model_construct(
        utilisation=2.7,
        capacity_eps=10.0 / 2.7,
        limits_utilisation={"partitions": 0.89, "instances x concurrency": 0.5, "TPM": 2.7},
    )
    text = render_explanation(
        check.fail_message, _names(material, Metrics.model_construct(by_group={"agent": group}))
    )
    assert "are 89 % busy at the peak (the agent group's tightest limit is TPM, 270 % used)" in text
    assert (
        "10.0 model calls/s are due against 3.7/s the TPM allows (bought in step 5 and judged "
        "there; the workers alone could take 11.2/s)" in text
    ), text
