"""A ceiling of nothing (0 tool runners, 0 agent instances) reads "no capacity" in the check
texts, never the simulation's cap on such a utilisation (1000, "100,000 %"); the calls due are
the scenario's load, not utilisation x a capacity of 0 ("0.0 model calls/s due")."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.checks.explanations import render_explanation
from app.course.design_fields import with_values
from app.grading.grader import load_material
from simulator.design import Design
from simulator.engine.metrics import UTILISATION_CAP
from simulator.estimate import estimate
from simulator.files import load_design
from simulator.result import GroupMetrics, Metrics

STEPS = Path(__file__).resolve().parents[2] / "steps"


@pytest.fixture(scope="module")
def material():
    return load_material(STEPS)


def _group(utilisation: float, capacity: float, limits: dict[str, float]) -> GroupMetrics:
    return GroupMetrics.model_construct(
        arrivals=36_000,
        processed=36_000,
        capacity_eps=capacity,
        utilisation=utilisation,
        limits_utilisation=limits,
        mean_step_s=2.0,
        latency_p95_s=0.5,
    )


def _names(material, step_id: str, design: Design, metrics: Metrics, scenario: str | None = None):
    step = material.loaded.step(step_id)
    sc = material.loaded.scenarios[scenario or step.step.scenario]
    return step, {
        "design": design,
        "scenario": sc,
        "metrics": metrics,
        "estimate": estimate(design, sc),
    }


def _design(material, **changes) -> Design:
    """The reference with dotted fields set (``tools.runners``), through the app's own
    :func:`app.course.design_fields.with_values`."""
    reference = load_design(STEPS / material.course.reference_design)
    return with_values(reference, {path.replace("__", "."): v for path, v in changes.items()})


def _texts(step, check_id: str, names) -> tuple[str, str]:
    (check,) = [c for c in step.step.checks if c.id == check_id]
    return render_explanation(check.fail_message, names), render_explanation(check.explain, names)


def test_zero_tool_runners_have_no_capacity(material):
    design = _design(material, tools__runners=0)
    metrics = Metrics.model_construct(
        by_group={
            "agent": _group(0.4, 25.0, {"partitions": 0.2, "instances x concurrency": 0.4}),
            "tool": _group(UTILISATION_CAP, 0.0, {"partitions": 0.1, "tool runners": 1000.0}),
            "state": _group(0.02, 1000.0, {"partitions": 0.01, "state write capacity": 0.02}),
        }
    )
    step, names = _names(material, "evening-peak", design, metrics)
    fail, _ = _texts(step, "tool-fleet-fits", names)
    assert "100,000" not in fail
    assert fail.startswith(
        "At the peak's offered load, tool runners have no capacity (6.0 tool calls/s due and 0 "
        "slots to run them; want 60 % busy at most) and the store's writes use 2 % of its capacity"
    )


def test_zero_agent_instances_have_no_capacity(material):
    design = _design(material, consumers__agent__instances=0)
    limits = {"partitions": 0.21, "instances x concurrency": UTILISATION_CAP, "RPM": 0.5}
    metrics = Metrics.model_construct(by_group={"agent": _group(UTILISATION_CAP, 0.0, limits)})
    step, names = _names(material, "evening-peak", design, metrics)
    fail, explain = _texts(step, "peak-utilisation", names)
    assert "100,000" not in fail + explain
    assert fail == (
        "The agent workers have no capacity: 0 instances x 12 = 0 slots to run a model call (want "
        "75 % busy at most), so the 10.0 model calls/s due at the peak all queue and an outage's "
        "backlog never drains."
    )
    assert explain.startswith("10.0 model calls/s due")
    assert "instances x concurrency (no capacity: 0 slots)" in explain


def test_the_provider_outage_says_no_capacity_not_the_cap(material):
    design = _design(material, consumers__agent__instances=0)
    limits = {"partitions": 0.21, "instances x concurrency": UTILISATION_CAP}
    metrics = Metrics.model_construct(
        by_group={"agent": _group(UTILISATION_CAP, 0.0, limits)},
        utilisation=UTILISATION_CAP,
        capacity_eps=0.0,
        drain_seconds=None,
        fallback_calls=0,
        outage_calls_unanswered=0,
        fallback_wait_mean_s=None,
        lag_total_max=450,
    )
    step, names = _names(material, "provider-outage", design, metrics)
    (check,) = [c for c in step.step.checks if "no drain to measure" in c.explain]
    explain = render_explanation(check.explain, names)
    assert "100,000" not in explain
    assert explain.startswith("600 s outage at 10.0 model calls/s due")
    assert "no drain to measure: the busiest group has no capacity at all" in explain
