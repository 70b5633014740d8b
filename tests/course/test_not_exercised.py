"""A check over an empty set is not exercised, never a pass: a design with zero agent instances
makes no model call and processes no agent step, so the course's checks over model calls and
agent latency score nothing for it (they said "0 calls, 0 refused" and passed before)."""

from __future__ import annotations

from app.grading.grader import grade, load_material
from simulator.files import load_design
from tests.course.conftest import STEPS_DIR

OVER_MODEL_CALLS = {
    ("evening-peak", "peak-utilisation"),
    ("checkpoints", "crash-rework-bounded"),
    ("worker-crash", "deploy-moves-few-partitions"),
    ("poison-messages", "poison-parked"),
    ("provider-outage", "breaker-opens-fast"),
    ("provider-outage", "breaker-closes"),
}
"""Checks of the steps from the one that decides the agent instances (step 7) on: the steps
before it judge the reference's instances (a step judges only what has been decided by then)."""


def test_zero_agent_instances_do_not_pass_the_checks_over_model_calls() -> None:
    material = load_material(STEPS_DIR)
    reference = load_design(STEPS_DIR / material.course.reference_design)
    agent = reference.consumers.agent.model_copy(update={"instances": 0})
    design = reference.model_copy(
        update={"consumers": reference.consumers.model_copy(update={"agent": agent})}
    )
    result = grade(design, material, seed=1)
    idle = {(s.id, c.id) for s in result.steps for c in s.checks if c.status == "not_exercised"}
    assert idle >= OVER_MODEL_CALLS
    checks = {(s.id, c.id): c for s in result.steps for c in s.checks}
    assert all(checks[key].points == 0 for key in idle)
    assert checks[("checkpoints", "crash-rework-bounded")].message == (
        "Not exercised: no model call was made: nothing to judge."
    )
    assert not [key for key, c in checks.items() if c.status == "error"]
    assert result.status == "fail"
