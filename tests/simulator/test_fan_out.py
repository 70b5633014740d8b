"""The workload a design produces: the orchestration rules on a run's planned fan-out, and the
mean arrivals per consumer group."""

from __future__ import annotations

import pytest

from simulator.design import Design
from simulator.estimate import estimate
from simulator.fan_out import SINGLE_AGENT_CALL_FACTOR, fan_out_per_run, mean_arrivals_eps
from simulator.scenario import Scenario


def course_peak() -> Scenario:
    return Scenario.model_validate({"name": "peak", "load": {"runs_per_second": 0.5}})


def test_fan_out_rules() -> None:
    scenario = course_peak()
    peers = Design.model_validate({"orchestration": {"pattern": "peer_agents"}})
    f = fan_out_per_run(peers, scenario.load)
    assert (f.model_calls, f.tool_calls, f.state_writes) == (50, 30, 100)
    assert f.factor == 2.5
    capped = Design.model_validate(
        {"orchestration": {"pattern": "peer_agents", "max_subagents": 5}}
    )
    f = fan_out_per_run(capped, scenario.load)
    assert (f.model_calls, f.tool_calls, f.state_writes) == (20, 12, 40)
    assert f.step_events == 72
    single = Design.model_validate({"orchestration": {"pattern": "single_agent"}})
    f = fan_out_per_run(single, scenario.load)
    assert f.model_calls == pytest.approx(20 * SINGLE_AGENT_CALL_FACTOR)
    assert f.tool_calls == 12
    budget = Design.model_validate(
        {"orchestration": {"pattern": "orchestrator_worker", "token_budget_per_run": 18_000}}
    )
    f = fan_out_per_run(budget, scenario.load)
    assert f.model_calls == 10  # 18,000 / 1,800 tokens per call
    assert f.tokens_per_run == 18_000
    # The estimate carries the multiplied load: 0.5 runs/s x 50 calls.
    assert estimate(peers, scenario).by_group["agent"].arrivals_eps == 25


def test_mean_arrivals_per_group() -> None:
    design = Design.model_validate({"orchestration": {"pattern": "orchestrator_worker"}})
    arrivals, fan, runs = mean_arrivals_eps(design, course_peak().load)
    assert arrivals == {"agent": 10, "tool": 6, "state": 20}
    assert fan is not None and fan.step_events == 72 and runs == 0.5
    steps = Scenario.model_validate(
        {"name": "steps", "load": {"runs_per_second": None, "step_events_per_second": 20}}
    )
    assert mean_arrivals_eps(design, steps.load) == (
        {"agent": 20, "tool": 0.0, "state": 0.0},
        None,
        None,
    )
