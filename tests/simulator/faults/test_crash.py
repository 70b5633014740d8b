"""Worker crashes (issue item 1): redelivery from the committed offset; what each commit order and
dedupe store loses or repeats; a property test over crash times, batch sizes and instance counts."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simulator import simulate
from simulator.design import Design
from simulator.engine import Workload
from simulator.result import Metrics
from simulator.scenario import Scenario, WorkerCrash
from tests.simulator.faults.builders import (
    course_scenario,
    design,
    known_bad,
    reference,
    run_arrays,
)

TEN_AT_ONCE = Workload.from_arrays(60.0, agent=([1.0] * 10, [1.0] * 10))
"""Ten records in one partition at t = 1 s, 1 s each: one batch of ten."""


def batch_crash(commit: str, dedupe: str, **delivery: Any) -> Metrics:
    """One instance, one partition, max.poll.records 10: the batch 0..9 is fetched at 1 s and the
    instance dies at 4.5 s (0, 1, 2 done, 3 in progress) for 10 s, then reads again from its
    committed offset."""
    d = design(
        event_log={"partitions": 1},
        delivery={"commit": commit, "dedupe": dedupe, **delivery},
        consumers={
            "agent": {"instances": 1, "concurrency_per_instance": 1, "max_poll_records": 10}
        },
    )
    crash = {"kind": "worker_crash", "at_seconds": 4.5, "duration_seconds": 10, "instances": 1}
    return run_arrays(d, TEN_AT_ONCE, [crash])[1].metrics


def test_commit_after_with_durable_dedupe_loses_and_repeats_nothing() -> None:
    m = batch_crash("after_processing", "durable_same_transaction")
    assert (m.lost, m.duplicate_effects) == (0, 0)
    assert m.redelivered == 10  # at most one batch of max.poll.records for the one instance
    assert m.dedupe_skipped == 3
    assert m.processed == 10
    assert m.model_calls_repeated == 1  # the call cut by the crash


def test_commit_after_without_dedupe_repeats_the_completed_records() -> None:
    m = batch_crash("after_processing", "none")
    assert (m.lost, m.duplicate_effects, m.redelivered) == (0, 3, 10)
    assert m.model_calls_repeated == 3 + 1


def test_in_memory_dedupe_is_forgotten_by_the_crash() -> None:
    m = batch_crash("after_processing", "in_memory")
    assert (m.lost, m.duplicate_effects, m.dedupe_skipped) == (0, 3, 0)


def test_commit_before_processing_loses_the_fetched_unprocessed_records() -> None:
    m = batch_crash("before_processing", "durable_same_transaction")
    assert m.lost == 7  # offsets 3..9: committed at the fetch, never completed
    assert (m.redelivered, m.duplicate_effects) == (0, 0)
    assert m.processed == 3


def test_auto_commit_runs_ahead_of_the_work_and_loses() -> None:
    """An auto-commit tick at 2 s commits the fetched position 10 while record 1 is processing."""
    m = batch_crash("auto", "durable_same_transaction", auto_commit_interval_ms=2000)
    assert m.lost == 7
    late = batch_crash("auto", "durable_same_transaction", auto_commit_interval_ms=60_000)
    assert late.lost == 0  # no tick before the crash: the batch is redelivered
    assert late.redelivered == 10


def test_a_kill_at_a_batch_boundary_loses_and_repeats_nothing() -> None:
    d = design(
        event_log={"partitions": 1},
        consumers={
            "agent": {"instances": 1, "concurrency_per_instance": 1, "max_poll_records": 10}
        },
        delivery={"dedupe": "none"},
    )
    crash = {"kind": "worker_crash", "at_seconds": 4.5, "duration_seconds": 10, "mid_batch": False}
    m = run_arrays(d, TEN_AT_ONCE, [crash])[1].metrics
    assert (m.lost, m.redelivered, m.duplicate_effects, m.processed) == (0, 0, 0, 10)


def redelivery_bound(d: Design, s: Scenario) -> int:
    """At most one batch of max.poll.records per crashed instance per crash."""
    agent = d.consumers.agent
    return sum(
        (agent.instances if f.instances == "all" else f.instances) * agent.max_poll_records
        for f in s.faults
        if isinstance(f, WorkerCrash)
    )


@pytest.mark.parametrize("name", ["instance-crash", "worker-crash"])
def test_course_crash_scenarios(name: str) -> None:
    """The reference loses and repeats nothing; redelivery stays within one batch per crashed
    instance; without durable dedupe effects repeat; committing before processing loses."""
    s = course_scenario(name)
    ref = simulate(reference(), s).metrics
    assert (ref.lost, ref.duplicate_effects) == (0, 0)
    assert 0 < ref.redelivered <= redelivery_bound(reference(), s)
    no_dedupe = simulate(known_bad("no-dedupe"), s).metrics
    assert no_dedupe.duplicate_effects == ref.dedupe_skipped > 0
    assert simulate(known_bad("in-memory-dedupe"), s).metrics.duplicate_effects > 0
    assert simulate(known_bad("commit-before-processing"), s).metrics.lost > 0


def test_auto_commit_loses_in_the_course_worker_crash() -> None:
    assert simulate(known_bad("auto-commit"), course_scenario("worker-crash")).metrics.lost > 0


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    crash_at=st.floats(min_value=0.0, max_value=90.0),
    down_s=st.floats(min_value=0.5, max_value=60.0),
    batch=st.integers(min_value=1, max_value=30),
    instances=st.integers(min_value=1, max_value=4),
    crashed=st.integers(min_value=1, max_value=4),
    concurrency=st.integers(min_value=1, max_value=4),
    partitions=st.integers(min_value=1, max_value=12),
    rate=st.floats(min_value=0.5, max_value=8.0),
    step_s=st.floats(min_value=0.1, max_value=2.0),
    mid_batch=st.booleans(),
    strategy=st.sampled_from(["range", "round_robin", "cooperative_sticky"]),
)
def test_commit_after_with_durable_dedupe_never_loses_nor_duplicates(
    crash_at: float,
    down_s: float,
    batch: int,
    instances: int,
    crashed: int,
    concurrency: int,
    partitions: int,
    rate: float,
    step_s: float,
    mid_batch: bool,
    strategy: str,
) -> None:
    crashed = min(crashed, instances)
    # A poll fetches at least one record per partition worked on, so max.poll.records below the
    # concurrency would not bound what an instance holds; keep it at or above.
    batch = max(batch, concurrency)
    d = design(
        event_log={"partitions": partitions},
        consumers={
            "agent": {
                "instances": instances,
                "concurrency_per_instance": concurrency,
                "max_poll_records": batch,
                "session_timeout_ms": 10_000,
                "assignment": strategy,
            }
        },
    )
    n = int(rate * 120)
    workload = Workload.from_arrays(400.0, agent=([i / rate for i in range(n)], [step_s] * n))
    crash = {
        "kind": "worker_crash",
        "at_seconds": crash_at,
        "duration_seconds": down_s,
        "instances": crashed,
        "mid_batch": mid_batch,
    }
    sim, result = run_arrays(d, workload, [crash])
    m = result.metrics
    assert m.lost == 0
    assert m.duplicate_effects == 0
    assert m.redelivered <= crashed * batch
    for part in sim.engine.groups["agent"].parts:
        # Nothing silently skipped: every offset below the processed mark was processed, and the
        # committed offset never passes it.
        assert part.committed <= part.hw
        assert all(f == f for f in part.first_finish[: part.hw])  # no NaN


@pytest.mark.parametrize("max_poll_records", [1, 20, 50, 200])
def test_a_crash_after_the_effect_always_repeats_effects_without_dedupe(
    max_poll_records: int,
) -> None:
    """The course's worker crash lands after a step's effect and before its commit on every
    member, so `dedupe: none` repeats effects on every seed and batch size (and durable dedupe
    skips exactly those records)."""
    bad = known_bad("no-dedupe").model_dump(mode="json")
    bad["consumers"]["agent"]["max_poll_records"] = max_poll_records
    no_dedupe = Design.model_validate(bad)
    good = reference(consumers={"agent": {"max_poll_records": max_poll_records}})
    crash = course_scenario("worker-crash", duration_seconds=480)
    instances = no_dedupe.consumers.agent.instances
    for seed in range(1, 31):
        m = simulate(no_dedupe, crash, seed=seed).metrics
        assert m.duplicate_effects >= instances, (seed, max_poll_records)
        ref = simulate(good, crash, seed=seed).metrics
        assert ref.duplicate_effects == 0
        assert ref.dedupe_skipped >= instances, (seed, max_poll_records)


def test_an_after_effect_crash_dies_at_the_end_of_the_step_in_progress() -> None:
    """One instance, one partition, ten 1 s records from 1 s: asked to crash at 4.5 s, it dies at
    5 s, record 3's effect written and not committed; without dedupe records 0-3 repeat."""
    d = design(
        event_log={"partitions": 1},
        delivery={"dedupe": "none"},
        consumers={"agent": {"instances": 1, "concurrency_per_instance": 1, "max_poll_records": 1}},
    )
    crash = {
        "kind": "worker_crash",
        "at_seconds": 4.5,
        "duration_seconds": 10,
        "instances": 1,
        "after_effect": True,
    }
    m = run_arrays(d, TEN_AT_ONCE, [crash])[1].metrics
    # One record a batch, committed at each end: only record 3 was done and uncommitted.
    assert (m.lost, m.duplicate_effects, m.redelivered) == (0, 1, 1)
    plain = {**crash, "after_effect": False}
    m = run_arrays(d, TEN_AT_ONCE, [plain])[1].metrics
    assert m.duplicate_effects == 0  # a kill at 4.5 s finds nothing done and uncommitted
