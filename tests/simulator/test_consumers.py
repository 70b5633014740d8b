"""Consumer groups, the runner fleet and the state store (simulator.engine.consumers, tools,
statestore), through small simulations; the model provider's admission is tested in
tests/simulator/engine/test_provider.py."""

from __future__ import annotations

import random
from typing import Any

import pytest

from simulator.design import Design, RetryPolicy
from simulator.engine import Workload
from simulator.engine.provider import backoff_seconds
from simulator.result import Metrics
from simulator.scenario import Scenario
from simulator.simulation import Assembly, assemble, run_workload

UNLIMITED_MODEL = {"rpm": 1_000_000, "tpm": 10_000_000_000, "max_concurrency": 10_000}


def make_design(agent: dict[str, Any] | None = None, **sections: Any) -> Design:
    body: dict[str, Any] = {
        "event_log": {"partitions": 8, "partition_key": "event_id"},
        "delivery": {"commit": "after_processing", "dedupe": "durable_same_transaction"},
        "consumers": {"agent": {"instances": 2, "concurrency_per_instance": 4, **(agent or {})}},
        "model": {"primary": UNLIMITED_MODEL},
    }
    for key, value in sections.items():
        if isinstance(value, dict) and isinstance(body.get(key), dict):
            body[key] = {**body[key], **value}
        else:
            body[key] = value
    return Design.model_validate(body)


def simulation(
    design: Design, workload: Workload, faults: list[dict[str, Any]] | None = None
) -> Assembly:
    scenario = Scenario.model_validate({"name": "t", "faults": faults or []})
    return assemble(design, scenario, workload, 1)


def even(rate: float, duration: float, step: float) -> tuple[list[float], list[float]]:
    n = int(rate * duration)
    return [i / rate for i in range(n)], [step] * n


def run(design: Design, workload: Workload, faults: list[dict[str, Any]] | None = None) -> Metrics:
    scenario = Scenario.model_validate({"name": "t", "faults": faults or []})
    return run_workload(design, scenario, workload, 1).metrics


# ----------------------------------------------------------------------------- assignment


@pytest.mark.parametrize(("instances", "owned"), [(4, [2, 2, 1, 1]), (8, [1] * 6 + [0, 0])])
def test_range_assignment_of_six_partitions(instances: int, owned: list[int]) -> None:
    """Item 1: 6 partitions over 4 consumers -> [2, 2, 1, 1]; over 8, consumers 6 and 7 own none."""
    d = make_design(
        {"instances": instances, "concurrency_per_instance": 1, "assignment": "range"},
        event_log={"partitions": 6},
    )
    sim = simulation(d, Workload.from_arrays(10.0, agent=even(1, 5, 0.1)))
    group = sim.engine.groups["agent"]
    group.start(0.0)
    assert [group.assignment.count(i) for i in range(instances)] == owned


def test_partitions_beyond_instance_concurrency_wait_for_a_slot() -> None:
    """1 instance x 2 slots over 8 busy partitions: only 2 processed at once, capacity 2 / 1 s."""
    d = make_design({"instances": 1, "concurrency_per_instance": 2, "max_poll_records": 4})
    m = run(d, Workload.from_arrays(300.0, agent=even(4, 300, 1.0)))
    agent = m.by_group["agent"]
    assert agent.busy_partitions_max == 2
    assert agent.capacity_eps == pytest.approx(2.0)
    assert m.processed == pytest.approx(600, abs=4)


# ----------------------------------------------------------------------------- commits


def batch_then_crash(commit: str, faults_extra: dict[str, Any] | None = None) -> Metrics:
    """Offsets 0..99 processed one a second; 100..104 arrive together at 200 s (1 s each);
    the only instance crashes at 203.5 s for 10 s (see test_worked_example.micro_case)."""
    d = make_design(
        {"instances": 1, "concurrency_per_instance": 1, "max_poll_records": 5},
        event_log={"partitions": 1},
        delivery={"commit": commit, "auto_commit_interval_ms": 500},
    )
    workload = Workload.from_arrays(
        300.0, agent=([float(i) for i in range(100)] + [200.0] * 5, [0.5] * 100 + [1.0] * 5)
    )
    crash = {"kind": "worker_crash", "at_seconds": 203.5, "duration_seconds": 10}
    return run(d, workload, [{**crash, **(faults_extra or {})}])


def test_auto_commit_runs_ahead_of_the_work_and_loses_records() -> None:
    """Auto-commit every 500 ms commits the fetched position 105 at 200.5 s: 2 records lost."""
    m = batch_then_crash("auto")
    assert m.lost == 2
    assert m.duplicate_effects == 0


def test_a_crash_between_batches_loses_and_repeats_nothing() -> None:
    """mid_batch false: the member finishes its batch, commits, then dies."""
    m = batch_then_crash("after_processing", {"mid_batch": False})
    assert (m.lost, m.redelivered, m.duplicate_effects) == (0, 0, 0)
    assert m.processed == 105


def test_response_cache_serves_repeated_steps() -> None:
    """No dedupe but a response cache at the model gateway: the 3 completed steps repeat their
    effect without a model call, and so does the step cut mid-call (its call still finishes at
    the provider at 204 s and the gateway stores the answer before the redelivery at 213.5 s)."""
    d = make_design(
        {"instances": 1, "concurrency_per_instance": 1, "max_poll_records": 5},
        event_log={"partitions": 1},
        delivery={"dedupe": "none"},
        model={"primary": UNLIMITED_MODEL, "cache": {"enabled": True}},
    )
    workload = Workload.from_arrays(
        300.0, agent=([float(i) for i in range(100)] + [200.0] * 5, [0.5] * 100 + [1.0] * 5)
    )
    m = run(d, workload, [{"kind": "worker_crash", "at_seconds": 203.5, "duration_seconds": 10}])
    assert m.duplicate_effects == 3
    assert m.cache_hits == 4
    assert m.model_calls_repeated == 0
    assert m.model_calls == 105


# ----------------------------------------------------------------------------- rebalances


def test_partial_crash_is_detected_after_the_session_timeout() -> None:
    """1 of 4 instances down at 100 s: its partitions stall until session.timeout.ms (10 s), the
    survivors take them over (rebalance 1) and the member rejoins at 160 s (rebalance 2)."""
    d = make_design(
        {"instances": 4, "concurrency_per_instance": 4, "session_timeout_ms": 10_000},
        event_log={"partitions": 16},
    )
    workload = Workload.from_arrays(300.0, agent=even(8, 300, 1.0))
    sim = simulation(
        d,
        workload,
        [{"kind": "worker_crash", "at_seconds": 100, "duration_seconds": 60, "instances": 1}],
    )
    m = sim.run().metrics
    assert m.rebalances == 2
    assert m.lost == 0
    series = sim.engine.fine_backlog["agent"]
    t = sim.engine.fine_t
    # 4 partitions x 0.5 events/s pile up for 10 s, then the survivors catch up.
    stalled = series[(t > 108) & (t < 110)].max()
    assert 15 <= stalled <= 25
    assert series[(t > 140) & (t < 160)].max() <= 4


def test_cooperative_sticky_keeps_survivors_partitions() -> None:
    d = make_design(
        {
            "instances": 3,
            "concurrency_per_instance": 4,
            "session_timeout_ms": 6_000,
            "assignment": "cooperative_sticky",
        },
        event_log={"partitions": 12},
    )
    sim = simulation(d, Workload.from_arrays(100.0, agent=even(2, 100, 0.5)))
    group = sim.engine.groups["agent"]
    group.start(0.0)
    group.advance(10.0)
    before = list(group.assignment)
    group.crash(10.0, [2])
    group.advance(15.0)
    group.rebalance(15.0)
    group.advance(30.0)
    after = group.assignment
    assert all(after[p] == before[p] for p in range(12) if before[p] != 2)
    assert sorted(after.count(i) for i in range(3)) == [0, 6, 6]


# ----------------------------------------------------------------------------- shared limits


def test_backoff_with_jitter() -> None:
    policy = RetryPolicy(base_backoff_seconds=1, max_backoff_seconds=30, jitter="none")
    r = random.Random(1)
    assert [backoff_seconds(policy, a, r) for a in (1, 2, 3, 6, 7)] == [1, 2, 4, 30, 30]
    full = RetryPolicy(base_backoff_seconds=1, max_backoff_seconds=30, jitter="full")
    draws = [backoff_seconds(full, 4, r) for _ in range(1000)]
    assert min(draws) >= 0.01 and max(draws) <= 8
    assert sum(draws) / len(draws) == pytest.approx(4, rel=0.1)


def test_state_store_write_capacity() -> None:
    """100 writes/s offered against a store taking 50 writes/s: 50/s processed."""
    d = make_design(
        event_log={"partitions": 16},
        consumers={"state": {"instances": 2, "concurrency_per_instance": 8}},
        state_store={"write_capacity_per_second": 50, "write_latency_ms": 10},
    )
    m = run(d, Workload.from_arrays(100.0, state=even(100, 100, 0.01)))
    assert m.by_group["state"].capacity_eps == pytest.approx(50.0)
    assert m.throughput_eps == pytest.approx(50.0, rel=0.02)


def test_state_write_latency_comes_from_the_design() -> None:
    d = make_design(state_store={"write_latency_ms": 40})
    scenario = Scenario.model_validate(
        {
            "name": "s",
            "duration_seconds": 60,
            "deterministic": True,
            "load": {"runs_per_second": 0.5},
        }
    )
    from simulator import simulate

    assert simulate(d, scenario, 1).metrics.by_group["state"].mean_step_s == pytest.approx(0.04)


def test_tool_runner_fleet_is_shared() -> None:
    """One runner slot and 1 s tool calls: 1 call/s, however many partitions and consumers."""
    d = make_design(
        event_log={"partitions": 16},
        consumers={"tool": {"instances": 4, "concurrency_per_instance": 4}},
        tools={"runners": 1, "concurrency_per_runner": 1},
    )
    m = run(d, Workload.from_arrays(200.0, tool=even(3, 200, 1.0)))
    assert m.by_group["tool"].capacity_eps == pytest.approx(1.0)
    assert m.throughput_eps == pytest.approx(1.0, rel=0.02)


# ----------------------------------------------------------------------------- failures


def test_failed_steps_go_to_the_dead_letter_queue_or_are_lost() -> None:
    """A provider that admits nothing (TPM below one call): after model retries and the failure
    policy's attempts, each step is dead-lettered with a DLQ, dropped (lost) without one."""
    base: dict[str, Any] = {
        "event_log": {"partitions": 1},
        "consumers": {"agent": {"instances": 1, "concurrency_per_instance": 1}},
        "model": {
            "primary": {"rpm": 1000, "tpm": 10, "max_concurrency": 10},
            "retry": {"max_attempts": 2, "base_backoff_seconds": 0.1},
        },
    }
    policy = {"max_attempts": 2, "base_backoff_seconds": 0.1}
    with_dlq = make_design(
        **base, failures={"retry": policy, "dead_letter_queue": {"enabled": True}}
    )
    without = make_design(**base, failures={"retry": policy})
    workload = Workload.from_arrays(100.0, agent=([1.0, 2.0, 3.0], [1.0, 1.0, 1.0]))
    assert run(with_dlq, workload).dead_lettered == 3
    lost = run(without, workload)
    assert (lost.lost, lost.dead_lettered, lost.processed) == (3, 0, 0)


def test_per_event_failure_hook_stalls_the_partition() -> None:
    """Item 8 through the hook the faults layer uses: an event that fails every time, retried
    after 1, 2, 4, 8, 16 s, then dead-lettered, holds the partition 31 s (attempts take no time
    here: each failure is immediate)."""
    d = make_design(
        {"instances": 1, "concurrency_per_instance": 1},
        event_log={"partitions": 1},
        failures={
            "retry": {"max_attempts": 6, "base_backoff_seconds": 1, "max_backoff_seconds": 60},
            "dead_letter_queue": {"enabled": True},
        },
    )
    sim = simulation(d, Workload.from_arrays(100.0, agent=([10.0, 10.5], [0.1, 0.1])))
    sim.engine.groups["agent"].parts[0].fail_attempts = {0: -1}
    m = sim.run().metrics
    assert m.dead_lettered == 1
    assert m.processed == 1
    assert m.by_group["agent"].wait_mean_s == pytest.approx(31 - 0.5, abs=1e-6)


def test_an_explicit_workload_is_not_changed_by_a_run() -> None:
    """The state store scales state-write times for its own run only; a second run of the same
    workload object gives the same figures, and so does a run after a different design."""
    workload = Workload.from_arrays(60.0, state=even(20, 60, 0.01))
    slow = make_design(state_store={"write_latency_ms": 50})
    first = run(slow, workload)
    run(make_design(state_store={"write_latency_ms": 5}), workload)
    again = run(slow, workload)
    assert first == again
    assert first.by_group["state"].mean_step_s == pytest.approx(0.05)
    assert workload.groups["state"].step_s.tolist() == [0.01] * 1200
