"""Closed forms: worked-numbers items 2, 3, 6, 9, 14-16 exactly, and the estimate built on them."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import pytest

from simulator.analytic import (
    SINGLE_AGENT_CALL_FACTOR,
    LimitingFactor,
    backlog_after_outage,
    backlog_per_partition,
    batch_seconds,
    busy_partitions,
    capacity_eps,
    drain_seconds,
    effects_repeat_after_crash,
    erlang_b,
    erlang_c,
    estimate,
    fan_out_per_run,
    kingman_wait,
    little_in_flight,
    md1,
    mg1_wait,
    mm1,
    mmc_wait_seconds,
    outbox_relay_delay,
    partition_lag,
    poll_interval_exceeded,
    redelivered_bound,
    restart_rework,
    step_time_scv,
    tokens_per_minute,
    total_lag,
    utilisation,
)
from simulator.assignment import member_ids, rebalance
from simulator.design import (
    AssignmentStrategy,
    CommitMode,
    Dedupe,
    Design,
    FallbackProvider,
    Replication,
)
from simulator.scenario import Scenario, StepTime

# Worked item 2: lag and drain -------------------------------------------------------------------


def test_item_2_lag_per_partition_total_and_drain() -> None:
    ends, committed = [1200, 1180, 1260], [1150, 1180, 1100]
    assert partition_lag(ends, committed) == [50, 0, 160]
    assert total_lag(ends, committed) == 210
    assert drain_seconds(210, capacity=45, arrivals_eps=30) == 14


def test_lag_rejects_bad_offsets() -> None:
    with pytest.raises(ValueError):
        partition_lag([10, 20], [5])
    with pytest.raises(ValueError):
        partition_lag([10], [11])


# Worked item 3: max.poll.interval.ms -------------------------------------------------------------


def test_item_3_poll_interval() -> None:
    assert batch_seconds(50, 2.0) == 100
    assert not poll_interval_exceeded(50, 2.0)
    assert batch_seconds(50, 7.0) == 350
    assert poll_interval_exceeded(50, 7.0, max_poll_interval_ms=300_000)
    # Concurrency across the batch's partitions shortens it: 50 / 4 -> 13 rounds of 7 s = 91 s.
    assert batch_seconds(50, 7.0, concurrency=4) == 91
    assert not poll_interval_exceeded(50, 7.0, concurrency=4)
    # Exactly at the limit is not over it.
    assert not poll_interval_exceeded(50, 6.0)


# Worked item 6: outbox relay --------------------------------------------------------------------


def test_item_6_outbox_relay_mean_half_the_interval() -> None:
    d = outbox_relay_delay(500)
    assert d.mean_ms == 250
    assert d.worst_ms == 500
    d = outbox_relay_delay(500, query_ms=5, publish_ms=10)
    assert d.worst_ms == 515
    assert d.mean_ms == 265


# Worked item 9: the sizing example, function by function ----------------------------------------


def test_item_9_closed_forms() -> None:
    assert little_in_flight(20, 2.0) == 40
    busy = busy_partitions(48, 4, 12)
    assert busy == 48
    cap = capacity_eps(busy, 2.0)
    assert cap == 24
    assert round(utilisation(20, cap), 4) == 0.8333
    backlog = backlog_after_outage(20, 180)
    assert backlog == 3600
    assert backlog_per_partition(backlog, 48) == 75
    assert drain_seconds(backlog, cap, 20) == 900
    assert capacity_eps(40, 2.0) == 20
    assert drain_seconds(backlog, capacity_eps(40, 2.0), 20) is None
    assert redelivered_bound(4, 50) == 200
    rework = restart_rework(4, 50, 2.0, busy)
    assert rework.redelivered == 200
    assert rework.worker_seconds == 400
    assert rework.model_calls == 200
    assert round(rework.fleet_seconds, 1) == 8.3


def test_busy_partitions_is_min_of_partitions_and_slots() -> None:
    assert busy_partitions(6, 4, 1) == 4
    assert busy_partitions(10, 4, 2) == 8
    assert busy_partitions(10, 4, 3) == 10
    assert busy_partitions(12, 0, 8) == 0


@pytest.mark.parametrize("partitions", [1, 5, 7, 12, 48])
@pytest.mark.parametrize("instances", [1, 2, 3, 4, 8])
@pytest.mark.parametrize("concurrency", [1, 2, 3, 5])
def test_busy_partitions_matches_kafka_assignment(
    partitions: int, instances: int, concurrency: int
) -> None:
    # Sum over members of min(owned, concurrency) under range assignment.
    owned = rebalance("range", member_ids(instances), partitions).assignment
    exact = sum(min(len(tps), concurrency) for tps in owned.values())
    assert busy_partitions(partitions, instances, concurrency) == exact


def test_drain_edge_cases() -> None:
    assert drain_seconds(0, 10, 20) == 0.0
    assert drain_seconds(100, 20, 20) is None
    assert drain_seconds(100, 19, 20) is None
    with pytest.raises(ValueError):
        drain_seconds(-1, 10, 5)
    assert backlog_after_outage(20, 180, capacity_during=15) == 900
    assert backlog_after_outage(20, 180, capacity_during=25) == 0
    assert utilisation(0, 0) == 0.0
    assert utilisation(5, 0) == math.inf


# Worked items 14-16: queueing theory --------------------------------------------------------------


def test_item_14_mm1() -> None:
    q = mm1(3, 5)
    assert q.rho == pytest.approx(0.6)
    assert q.wq == pytest.approx(0.3, abs=1e-12)
    assert q.w == pytest.approx(0.5, abs=1e-12)
    assert mm1(5, 5).wq == math.inf


def test_item_15_md1_is_half_mm1() -> None:
    q = md1(20, 30)
    assert round(q.wq, 4) == 0.0333
    assert q.wq == pytest.approx(mm1(20, 30).wq / 2, rel=1e-12)
    # Pollaczek-Khinchine with zero service variance is the same M/D/1 figure.
    assert mg1_wait(20, 1 / 30, 0.0) == pytest.approx(q.wq, rel=1e-12)
    assert mg1_wait(3, 1 / 5, 1.0) == pytest.approx(0.3, rel=1e-12)
    assert kingman_wait(3, 0.2, 0.0, 0.0) == 0.0


def test_item_16_erlang_c() -> None:
    assert round(erlang_c(10, 14), 7) == 0.1741319
    assert erlang_c(2, 3) == pytest.approx(4 / 9, rel=1e-12)
    assert round(mmc_wait_seconds(0.2, 0.1, 3), 4) == 4.4444
    assert round(mmc_wait_seconds(0.2, 0.1, 4), 6) == 0.869565
    assert erlang_c(14, 14) == 1.0
    assert mmc_wait_seconds(1.4, 0.1, 14) == math.inf


def erlang_c_exact(a: int, c: int) -> float:
    """Erlang C from its textbook sum, in exact rational arithmetic."""
    term = Fraction(1)
    total = Fraction(0)
    for k in range(c):
        total += term
        term = term * a / (k + 1)
    top = term * Fraction(c, c - a)  # a^c / c! x c / (c - a)
    return float(top / (total + top))


def test_erlang_is_stable_for_large_pools() -> None:
    # a^c / c! overflows a float long before c = 1000; the recursion stays exact to 1e-12.
    assert erlang_c(900, 1000) == pytest.approx(erlang_c_exact(900, 1000), rel=1e-9)
    assert erlang_c(10, 14) == pytest.approx(erlang_c_exact(10, 14), rel=1e-12)
    assert 0 < erlang_b(900, 1000) < erlang_c(900, 1000) < 1


def test_step_time_variability() -> None:
    assert step_time_scv(StepTime(distribution="constant", mean_seconds=1)) == 0
    assert step_time_scv(StepTime(distribution="exponential", mean_seconds=1)) == 1
    lognormal = StepTime(distribution="lognormal", mean_seconds=1, sigma=0.5)
    assert step_time_scv(lognormal) == pytest.approx(math.exp(0.25) - 1)


def test_tokens_per_minute_course_peak() -> None:
    assert tokens_per_minute(10, 1500, 300) == 1_080_000


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
    assert effects_repeat_after_crash(design)
    design.delivery.dedupe = Dedupe.durable_same_transaction
    assert not effects_repeat_after_crash(design)


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
    # Erlang C on the provider's 32 slots with 20 Erlang offered.
    assert e.model.wait_probability == pytest.approx(erlang_c(20, 32))
    assert e.model.wait_s == pytest.approx(mmc_wait_seconds(10, 0.5, 32))
    # Poisson arrivals, lognormal agent steps (sigma 0.5): Pollaczek-Khinchine per partition.
    expected = mg1_wait(10 / 32, 2.0, math.expm1(0.25))
    assert agent.partition_wait_s == pytest.approx(expected)
    assert agent.latency_mean_s == pytest.approx(expected + 2.0)
    assert e.drain_seconds == 0.0 and e.drain_group is None


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


# The estimate: outages ------------------------------------------------------------------------


def faulted(*faults: dict[str, object]) -> Scenario:
    return Scenario.model_validate(
        {"name": "f", "load": {"runs_per_second": 0.5}, "faults": list(faults)}
    )


def roomy_design(**over: object) -> Design:
    data: dict[str, object] = {
        "orchestration": {"pattern": "orchestrator_worker"},
        "event_log": {"partitions": 32},
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
    assert a.drain_seconds == pytest.approx(75 / (16 - 10))


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
