"""The simulator and simulator.estimate agree within 5 % on capacity, utilisation and drain time
for low-variance scenarios (deterministic mode: even arrivals, constant step times, events spread
evenly over partitions)."""

from __future__ import annotations

from typing import Any

import pytest

from simulator import simulate
from simulator.design import Design
from simulator.estimate import estimate
from simulator.scenario import Scenario
from tests.simulator.test_worked_example import worked_design, worked_scenario

COURSE_DESIGN: dict[str, Any] = {
    "event_log": {"partitions": 48, "partition_key": "event_id"},
    "delivery": {"commit": "after_processing", "dedupe": "durable_same_transaction"},
    "consumers": {
        "agent": {"instances": 4, "concurrency_per_instance": 12, "max_poll_records": 50},
        "tool": {"instances": 2, "concurrency_per_instance": 24},
        "state": {"instances": 2, "concurrency_per_instance": 24},
    },
    "orchestration": {"pattern": "orchestrator_worker"},
    "model": {"primary": {"rpm": 3000, "tpm": 10_000_000, "max_concurrency": 64}},
    "tools": {"runners": 4, "concurrency_per_runner": 4},
}
AGENT_CRASH = {
    "name": "agent-crash",
    "duration_seconds": 1200,
    "deterministic": True,
    "load": {"runs_per_second": 0.5},
    "faults": [
        {"kind": "worker_crash", "at_seconds": 300, "duration_seconds": 120, "instances": "all"}
    ],
}
SLOW_TOOLS = {
    "name": "slow-tools",
    "duration_seconds": 600,
    "deterministic": True,
    "load": {
        "runs_per_second": 0.5,
        "step_time": {"tool_call": {"distribution": "constant", "mean_seconds": 2.0}},
    },
}


def with_provider_concurrency(limit: int) -> dict[str, Any]:
    body = dict(COURSE_DESIGN)
    body["model"] = {"primary": {**COURSE_DESIGN["model"]["primary"], "max_concurrency": limit}}
    return body


CASES = {
    "worked example": (worked_design(), worked_scenario()),
    "course mix, agent workers down 120 s": (
        Design.model_validate(COURSE_DESIGN),
        Scenario.model_validate(AGENT_CRASH),
    ),
    "tool runners are the bottleneck": (
        Design.model_validate(COURSE_DESIGN),
        Scenario.model_validate(SLOW_TOOLS),
    ),
    "provider concurrency below the load": (
        Design.model_validate(with_provider_concurrency(16)),
        Scenario.model_validate(AGENT_CRASH),
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_simulator_and_closed_forms_agree(case: str) -> None:
    design, scenario = CASES[case]
    expected = estimate(design, scenario)
    got = simulate(design, scenario, 3).metrics
    assert got.capacity_eps == pytest.approx(expected.capacity_eps, rel=0.05)
    assert got.utilisation == pytest.approx(expected.utilisation, rel=0.05)
    if expected.drain_seconds is None:
        assert got.drain_seconds is None
        assert got.drain_note is not None and got.drain_note.startswith("never drains")
    else:
        assert got.drain_seconds is not None
        assert got.drain_seconds == pytest.approx(expected.drain_seconds, rel=0.05, abs=1e-9)
