"""The estimate of a design under a scenario: worked-numbers item 9 through a Design and a
Scenario, runs and fan-out, the limiting factors, and the backlog each fault leaves."""

from __future__ import annotations

import json
import math

import pytest

from simulator.assignment import member_ids, rebalance
from simulator.capacity import LimitingFactor
from simulator.closed_forms.provider import bucket_wait
from simulator.closed_forms.queueing import erlang_c, kingman_wait, mmc_wait_seconds
from simulator.design import (
    AssignmentStrategy,
    CommitMode,
    Design,
    FallbackProvider,
    Replication,
)
from simulator.estimate import estimate
from simulator.scenario import Scenario

# The estimate: the worked sizing example through a Design and a Scenario --------------------------


def worked_design(partitions: int = 48) -> Design:
    return Design.model_validate(
        {
            "event_log": {"partitions": partitions},
            "delivery": {"commit": "after_processing", "dedupe": "none"},
            "consumers": {
                "agent": {"instances": 4, "concurrency_per_instance": 12, "max_poll_records": 50}
            },
            "model": {"primary": {"rpm": 100_000, "tpm": 1_000_000_000, "max_concurrency": 1000}},
        }
    )


def worked_scenario() -> Scenario:
    return Scenario.model_validate(
        {
            "name": "worked-sizing",
            "deterministic": True,
            "duration_seconds": 1800,
            "load": {
                "runs_per_second": None,
                "step_events_per_second": 20,
                "arrivals": "even",
                "step_time": {"agent_step": {"distribution": "constant", "mean_seconds": 2.0}},
            },
            "faults": [
                {
                    "kind": "worker_crash",
                    "at_seconds": 60,
                    "instances": "all",
                    "duration_seconds": 180,
                }
            ],
        }
    )


def test_item_9_through_the_estimate() -> None:
    e = estimate(worked_design(), worked_scenario())
    a = e.by_group["agent"]
    assert e.mode == "step_events"
    assert a.arrivals_eps == 20
    assert a.in_flight == 40
    assert a.partitions_needed == 40
    assert a.busy_partitions == 48
    assert a.capacity_eps == 24
    assert a.limiting_factor is LimitingFactor.partitions
    assert round(a.utilisation, 4) == 0.8333
    assert a.outage == "worker_crash"
    assert a.backlog == 3600
    assert a.backlog_per_partition == 75
    assert a.drain_seconds == 900
    assert a.redelivered_max == 200 and a.lost_max == 0
    # Deterministic: evenly spaced arrivals and constant steps never wait below saturation.
    assert a.partition_wait_s == 0
    assert e.bottleneck == "agent"
    assert e.drain_group == "agent" and e.drain_seconds == 900 and e.backlog == 3600
    assert e.by_group["tool"].arrivals_eps == 0 and e.by_group["state"].arrivals_eps == 0


def test_item_9_forty_partitions_never_drains() -> None:
    e = estimate(worked_design(partitions=40), worked_scenario())
    a = e.by_group["agent"]
    assert a.capacity_eps == 20
    assert a.utilisation == 1
    assert a.drain_seconds is None
    assert a.drain_note is not None and "Never drains" in a.drain_note
    assert e.drain_seconds is None and e.drain_group == "agent"
    # None and inf serialise as JSON null.
    data = json.loads(e.model_dump_json())
    assert data["by_group"]["agent"]["drain_seconds"] is None
    assert data["by_group"]["agent"]["partition_wait_s"] is None


def test_commit_mode_decides_redelivered_or_lost() -> None:
    design = worked_design()
    design.delivery.commit = CommitMode.before_processing
    a = estimate(design, worked_scenario()).by_group["agent"]
    assert a.redelivered_max == 0 and a.lost_max == 200
    design.delivery.commit = CommitMode.auto
    a = estimate(design, worked_scenario()).by_group["agent"]
    # A batch plus one 5 s auto-commit interval of the instance's 5 events/s, per instance.
    assert a.redelivered_max == 4 * (50 + 25)
    assert a.lost_max == 200


# The estimate: runs, fan-out and the limiting factors ---------------------------------------------


def course_peak(**load: object) -> Scenario:
    base: dict[str, object] = {"runs_per_second": 0.5}
    base.update(load)
    return Scenario.model_validate({"name": "peak", "load": base})


def test_runs_mode_course_peak_numbers() -> None:
    design = Design.model_validate(
        {
            "orchestration": {"pattern": "orchestrator_worker"},
            "event_log": {"partitions": 32},
            "consumers": {
                "agent": {"instances": 4, "concurrency_per_instance": 8},
                "tool": {"instances": 2, "concurrency_per_instance": 8},
                "state": {"instances": 2, "concurrency_per_instance": 8},
            },
            "model": {"primary": {"rpm": 900, "tpm": 1_500_000, "max_concurrency": 32}},
        }
    )
    e = estimate(design, course_peak())
    assert e.mode == "runs"
    assert e.by_group["agent"].arrivals_eps == 10
    assert e.by_group["tool"].arrivals_eps == 6
    assert e.by_group["state"].arrivals_eps == 20
    assert e.by_group["agent"].in_flight == 20
    assert e.model.input_tokens_per_minute == 900_000
    assert e.model.output_tokens_per_minute == 180_000
    assert e.model.tokens_per_minute == 1_080_000
    assert e.model.requests_per_minute == 600
    assert e.model.tpm_utilisation == pytest.approx(0.72)
    # TPM allows 1.5M / 60 / 1800 = 13.9 calls/s: the tightest ceiling of the agent group.
    agent = e.by_group["agent"]
    assert agent.limits_eps["TPM"] == pytest.approx(1_500_000 / 60 / 1800)
    assert agent.limits_eps["RPM"] == 15
    assert agent.limits_eps["provider concurrency"] == 16
    assert agent.limits_eps["partitions"] == 16
    assert agent.limiting_factor is LimitingFactor.tpm
    assert e.bottleneck == "agent" and e.limiting_factor == "TPM"
    assert e.utilisation == pytest.approx(10 / (1_500_000 / 60 / 1800))
    # 32 partitions can have 32 calls in flight at most: the gateway's 32 slots never fill; the
    # TPM bucket (72 % busy, a second's allowance of 13.9 calls) makes a burst wait rarely.
    tpm_rate = 1_500_000 / 60 / 1800
    assert e.model.wait_probability == 0.0
    assert e.model.wait_s == pytest.approx(bucket_wait(10, tpm_rate, tpm_rate, 1.0))
    assert e.model.wait_s < 1e-5
    # Poisson arrivals, lognormal agent steps (sigma 0.5): Pollaczek-Khinchine per partition.
    expected = kingman_wait(10 / 32, 2.0, 1.0, math.expm1(0.25))
    assert agent.partition_wait_s == pytest.approx(expected)
    assert agent.latency_mean_s == pytest.approx(expected + 2.0)
    assert e.drain_seconds == 0.0 and e.drain_group is None


def test_provider_wait_is_erlang_c_when_more_partitions_call_than_the_gateway_admits() -> None:
    """96 partitions, 24 slots, 20 Erlang offered (10 calls/s of 2 s): the gateway queues calls
    first come first served, an M/M/24 queue scaled by Allen-Cunneen's (c_a^2 + c_s^2) / 2 for
    Poisson calls (open-loop events) of lognormal length (c_s^2 = e^0.25 - 1); the TPM bucket
    (43 % busy) adds next to nothing. Causal runs call in bursts (peakedness 4): 2.14 x."""
    design = Design.model_validate(
        {
            "orchestration": {"pattern": "orchestrator_worker"},
            "event_log": {"partitions": 96},
            "consumers": {"agent": {"instances": 8, "concurrency_per_instance": 12}},
            "model": {"primary": {"rpm": 1500, "tpm": 2_500_000, "max_concurrency": 24}},
        }
    )
    e = estimate(design, course_peak())
    assert e.model.wait_probability == pytest.approx(erlang_c(20, 24))
    factor = (1.0 + math.expm1(0.25)) / 2.0
    assert e.model.wait_s == pytest.approx(mmc_wait_seconds(10, 0.5, 24) * factor, rel=1e-4)
    causal = estimate(design, course_peak(run_model="causal"))
    factor = (4.0 + math.expm1(0.25)) / 2.0
    assert causal.model.wait_s == pytest.approx(0.149 * factor, abs=0.001)


@pytest.mark.parametrize("limits", [{"rpm": 600}, {"tpm": 1_080_000}, {"max_concurrency": 20}])
def test_provider_wait_has_no_end_when_a_limit_is_below_the_calls(limits: dict[str, int]) -> None:
    """10 calls/s of 1,800 tokens need 600 RPM, 1,080,000 TPM and 20 slots: at any of those the
    wait never ends (the calls beyond the limit are refused, or queue, for ever)."""
    primary = {"rpm": 1500, "tpm": 2_500_000, "max_concurrency": 96, **limits}
    design = Design.model_validate(
        {
            "orchestration": {"pattern": "orchestrator_worker"},
            "event_log": {"partitions": 96},
            "consumers": {"agent": {"instances": 8, "concurrency_per_instance": 12}},
            "model": {"primary": primary},
        }
    )
    assert estimate(design, course_peak()).model.wait_s is None


def test_other_limiting_factors() -> None:
    design = Design.model_validate(
        {
            "orchestration": {"pattern": "orchestrator_worker"},
            "event_log": {"partitions": 64},
            "consumers": {
                "agent": {"instances": 2, "concurrency_per_instance": 4},
                "tool": {"instances": 8, "concurrency_per_instance": 8},
                "state": {"instances": 8, "concurrency_per_instance": 8},
            },
            "model": {"primary": {"rpm": 100_000, "tpm": 10**9, "max_concurrency": 1000}},
            "tools": {"runners": 1, "concurrency_per_runner": 2},
            "state_store": {"write_capacity_per_second": 15},
        }
    )
    e = estimate(design, course_peak())
    assert e.by_group["agent"].limiting_factor is LimitingFactor.instances
    assert e.by_group["agent"].capacity_eps == 4
    assert e.by_group["tool"].limiting_factor is LimitingFactor.tool_runners
    assert e.by_group["tool"].capacity_eps == 4
    assert e.by_group["state"].limiting_factor is LimitingFactor.state_write_capacity
    assert e.by_group["state"].capacity_eps == 15
    # Agent 10/4, tool 6/4, state 20/15: the agent group is the bottleneck.
    assert e.bottleneck == "agent"
    assert e.by_group["agent"].backlog_growth_eps == 6
    assert e.by_group["agent"].drain_seconds is None
    assert e.by_group["agent"].partition_wait_s is None
    # An outage the fallback carries does not hide that the group never keeps up.
    fallback = {"enabled": True, "rpm": 100_000, "tpm": 10**9, "max_concurrency": 1000}
    design.model.fallback = FallbackProvider.model_validate(fallback)
    design.model.circuit_breaker.enabled = True
    s = course_peak()
    s.faults = faulted({"kind": "provider_outage", "duration_seconds": 60}).faults
    a = estimate(design, s).by_group["agent"]
    assert a.outage == "provider_outage" and a.backlog == (10 - 4) * 60
    assert a.drain_seconds is None and a.drain_note is not None
    design.model.primary.max_concurrency = 4
    design.consumers.agent.instances = 8
    e = estimate(design, course_peak())
    assert e.by_group["agent"].limiting_factor is LimitingFactor.provider_concurrency
    assert e.by_group["agent"].capacity_eps == 2


# The estimate: outages ------------------------------------------------------------------------


def faulted(*faults: dict[str, object]) -> Scenario:
    return Scenario.model_validate(
        {"name": "f", "load": {"runs_per_second": 0.5}, "faults": list(faults)}
    )


def roomy_design(**over: object) -> Design:
    data: dict[str, object] = {
        "orchestration": {"pattern": "orchestrator_worker"},
        # Keyed by event id: events spread evenly, so a backlog spreads as its fault leaves it.
        "event_log": {"partitions": 32, "partition_key": "event_id"},
        "consumers": {
            "agent": {"instances": 4, "concurrency_per_instance": 8, "session_timeout_ms": 45_000},
            "tool": {"instances": 2, "concurrency_per_instance": 8},
            "state": {"instances": 2, "concurrency_per_instance": 8},
        },
        "model": {"primary": {"rpm": 100_000, "tpm": 10**9, "max_concurrency": 1000}},
    }
    data.update(over)
    return Design.model_validate(data)


def test_partial_crash_stalls_until_session_timeout_then_survivors_carry_all() -> None:
    # One of 4 instances (8 of 32 partitions) down 120 s; session timeout 45 s.
    s = faulted({"kind": "worker_crash", "group": "agent", "instances": 1, "duration_seconds": 120})
    a = estimate(roomy_design(), s).by_group["agent"]
    # 45 s with a quarter of 10 events/s unserved, then 3 x 8 = 24 slots / 2 s = 12/s > 10/s.
    stalled = 0.25 * 10 * 45
    assert a.backlog == pytest.approx(max(0.0, stalled + (10 - 12) * 75))
    assert a.backlog == 0  # the survivors caught up before the instance came back
    s = faulted({"kind": "worker_crash", "group": "agent", "instances": 1, "duration_seconds": 30})
    a = estimate(roomy_design(), s).by_group["agent"]
    assert a.backlog == pytest.approx(0.25 * 10 * 30)
    # The group has 16 - 10 = 6 events/s to spare (12.5 s of fluid drain), but the 75 events sit
    # on the crashed member's 8 partitions, each working one event at a time with its own load:
    # 75 / 8 / (1 / 2 s - 10 / 32) = 50 s.
    assert a.drain_seconds == pytest.approx(75 / 8 / (0.5 - 10 / 32))


def test_provider_outage_with_and_without_fallback() -> None:
    s = faulted({"kind": "provider_outage", "duration_seconds": 600})
    no_fallback = roomy_design()
    a = estimate(no_fallback, s).by_group["agent"]
    assert a.backlog == 6000
    assert a.drain_seconds == pytest.approx(6000 / (16 - 10))
    with_fallback = roomy_design(
        model={
            "primary": {"rpm": 100_000, "tpm": 10**9, "max_concurrency": 1000},
            "fallback": {"enabled": True, "rpm": 420, "tpm": 10**9, "max_concurrency": 1000},
            "circuit_breaker": {"enabled": True},
        }
    )
    a = estimate(with_fallback, s).by_group["agent"]
    # The fallback carries 420 / 60 = 7 calls/s of the 10 arriving.
    assert a.backlog == pytest.approx(3 * 600)
    # A fallback without a circuit breaker is never switched to.
    with_fallback.model.circuit_breaker.enabled = False
    assert estimate(with_fallback, s).by_group["agent"].backlog == 6000


def test_state_failover_backlog_and_async_writes_at_risk() -> None:
    s = faulted({"kind": "state_failover"})
    design = roomy_design(
        state_store={"failover": "automatic", "failover_seconds": 35, "replication_lag_ms": 1000}
    )
    e = estimate(design, s)
    assert e.by_group["state"].backlog == 20 * 35
    assert e.drain_group == "state"
    assert e.state_writes_at_risk == 20
    design.state_store.replication = Replication.sync
    assert estimate(design, s).state_writes_at_risk == 0


def test_rebalance_pauses_all_partitions_eagerly_but_few_cooperatively() -> None:
    s = faulted({"kind": "rebalance", "group": "agent", "pause_seconds": 10})
    design = roomy_design()
    design.consumers.agent.assignment = AssignmentStrategy.range
    assert estimate(design, s).by_group["agent"].backlog == 100
    design.consumers.agent.assignment = AssignmentStrategy.cooperative_sticky
    backlog = estimate(design, s).by_group["agent"].backlog
    # Cross-check with the assignor: one member of four leaves, only its partitions pause.
    members = member_ids(4)
    before = rebalance("cooperative_sticky", members, 32).assignment
    after = rebalance("cooperative_sticky", members[1:], 32, previous=before)
    assert backlog == pytest.approx(100 * after.paused_partitions / 32)
    assert backlog == 25


def test_consumer_pause_and_poison_in_the_estimate() -> None:
    s = faulted(
        {"kind": "consumer_pause", "group": "tool", "duration_seconds": 3600},
        {"kind": "poison", "group": "agent", "rate": 0.001},
    )
    design = roomy_design(
        failures={
            "retry": {"max_attempts": 6, "base_backoff_seconds": 1, "max_backoff_seconds": 30},
            "dead_letter_queue": {"enabled": True},
        }
    )
    e = estimate(design, s)
    assert e.by_group["tool"].backlog == 6 * 3600
    assert e.poison is not None and e.poison.stall_seconds == 31
    assert e.poison.events_behind == pytest.approx(10 / 32 * 31)


def test_the_estimate_never_raises_for_defaults() -> None:
    e = estimate(Design(), Scenario(name="default"))
    assert e.bottleneck in ("agent", "tool", "state")
    json.loads(e.model_dump_json())


def test_item_8_poison_stall_through_the_estimate() -> None:
    design = worked_design()
    design.failures.retry.max_attempts = 6  # the first attempt and five retries: 1, 2, 4, 8, 16 s
    design.failures.retry.base_backoff_seconds = 1
    design.failures.retry.max_backoff_seconds = 30
    design.failures.dead_letter_queue.enabled = True
    scenario = worked_scenario()
    scenario.faults = faulted({"kind": "poison", "group": "agent", "rate": 0.0001}).faults
    poison = estimate(design, scenario).poison
    assert poison is not None
    assert poison.stall_seconds == 31
    assert round(poison.partition_eps, 4) == 0.4167
    assert poison.events_behind is not None and round(poison.events_behind, 1) == 12.9
    design.failures.retry.max_attempts = None
    poison = estimate(design, scenario).poison
    assert poison is not None and poison.stall_seconds is None and poison.events_behind is None


def test_both_providers_down_together_stall_every_run() -> None:
    """The primary and the fallback hang together for 20 s: the breaker's fallback carries
    nothing, every run stalls, and 10 calls/s x 20 s = 200 calls come due. The stalled runs
    resume one step at a time, within a critical path, faster than the headroom: no queue
    builds, and the drain is the first retry's wait after the reset (full jitter of a 1 s
    backoff: 0.5 s on average)."""
    from tests.simulator.faults.builders import course_scenario, reference

    down = [
        {
            "kind": "provider_outage",
            "at_seconds": 300,
            "duration_seconds": 20,
            "provider": p,
            "hang_until_end": True,
        }
        for p in ("primary", "fallback")
    ]
    e = estimate(reference(), course_scenario("provider-outage", faults=down))
    agent = e.by_group["agent"]
    assert agent.backlog == pytest.approx(200)
    assert agent.drain_seconds == pytest.approx(0.5)
    primary_only = course_scenario("provider-outage", faults=down[:1])
    assert estimate(reference(), primary_only).by_group["agent"].backlog == 0
