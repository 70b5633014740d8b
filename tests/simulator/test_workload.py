"""The offered load and how the event log keys it (simulator.engine.workload and eventlog)."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from simulator.design import Design
from simulator.engine.eventlog import build_topic, fmix64, partitions_of
from simulator.engine.workload import (
    Workload,
    build_workload,
    run_template,
    step_times,
    zipf_tenants,
)
from simulator.scenario import Scenario, StepTime


def rng(seed: int = 1) -> np.random.Generator:
    return np.random.default_rng(seed)


def runs_scenario(**load: object) -> Scenario:
    return Scenario.model_validate(
        {"name": "w", "duration_seconds": 3600, "load": {"runs_per_second": 0.5, **load}}
    )


def design(**orchestration: object) -> Design:
    return Design.model_validate({"orchestration": orchestration})


def test_a_run_fans_out_into_20_model_calls_12_tool_calls_40_state_writes() -> None:
    """Item 10: 72 step events per run; 0.5 runs/s gives 10 / 6 / 20 step events per second."""
    scenario = Scenario.model_validate(
        {
            "name": "even",
            "duration_seconds": 3600,
            "deterministic": True,
            "load": {"runs_per_second": 0.5},
        }
    )
    w = build_workload(design(pattern="orchestrator_worker"), scenario, rng())
    sizes = {name: g.size for name, g in w.groups.items()}
    assert sizes == {"agent": 36_000, "tool": 21_600, "state": 72_000}
    assert w.groups["agent"].offered_eps == pytest.approx(10.0)
    assert sum(sizes.values()) / 3600 == pytest.approx(36.0)


def test_uncapped_peer_agents_multiply_the_fan_out() -> None:
    """Peer agents without max_subagents: 2.5 x the planned step events (simulator.fan_out)."""
    scenario = runs_scenario(arrivals="even")
    capped = build_workload(design(pattern="peer_agents", max_subagents=5), scenario, rng())
    uncapped = build_workload(design(pattern="peer_agents"), scenario, rng())
    for name in ("agent", "tool", "state"):
        assert uncapped.groups[name].size == pytest.approx(2.5 * capped.groups[name].size, rel=1e-3)


def test_single_agent_keeps_a_fractional_mean_exactly() -> None:
    """A single agent makes 20 x 4/15 = 5.33 model calls per run: 1,800 runs make 9,600."""
    scenario = runs_scenario(arrivals="even")
    w = build_workload(design(pattern="single_agent"), scenario, rng())
    assert w.model_calls_per_run == pytest.approx(20 * 4 / 15)
    assert w.groups["agent"].size == pytest.approx(1800 * 20 * 4 / 15, abs=2)


def test_poisson_and_even_arrivals() -> None:
    single = {"runs_per_second": None, "step_events_per_second": 20.0}
    poisson = Scenario.model_validate(
        {"name": "p", "duration_seconds": 1000, "load": {**single, "arrivals": "poisson"}}
    )
    even = Scenario.model_validate(
        {"name": "e", "duration_seconds": 1000, "load": {**single, "arrivals": "even"}}
    )
    n = build_workload(design(), poisson, rng(3)).groups["agent"].size
    assert abs(n - 20_000) < 4 * math.sqrt(20_000)
    arrivals = build_workload(design(), even, rng(3)).groups["agent"].arrival_s
    assert arrivals.size == 20_000
    assert np.allclose(np.diff(arrivals), 0.05)


@pytest.mark.parametrize("distribution", ["exponential", "lognormal"])
def test_step_time_means(distribution: str) -> None:
    dist = StepTime(distribution=distribution, mean_seconds=2.0, sigma=0.8)
    draws = step_times(rng(5), dist, 200_000, deterministic=False)
    assert draws.mean() == pytest.approx(2.0, rel=0.01)
    assert step_times(rng(5), dist, 10, deterministic=True).tolist() == [2.0] * 10


def test_zipf_spread_of_tenants() -> None:
    """Rank k has weight 1/k^s: rank 1 is about 2^s times rank 2."""
    tenants = zipf_tenants(rng(7), 200, 1.1, 200_000)
    counts = Counter(tenants.tolist())
    assert counts[0] / counts[1] == pytest.approx(2**1.1, rel=0.05)
    assert set(counts) <= set(range(200))


def test_run_template_interleaves_kinds() -> None:
    template = run_template(20, 12, 40)
    assert Counter(template.tolist()) == {0: 20, 1: 12, 2: 40}
    assert run_template(1, 0, 0).tolist() == [0]
    # Evenly interleaved: no more than 40/20 + 1 state writes in a row.
    longest = max(len(run) for run in "".join(map(str, template)).split("0") + [""])
    assert longest <= 4


def test_from_arrays_checks_its_input() -> None:
    with pytest.raises(ValueError, match="step times"):
        Workload.from_arrays(10.0, agent=([0.0, 1.0], [1.0]))
    with pytest.raises(ValueError, match="non-decreasing"):
        Workload.from_arrays(10.0, agent=([1.0, 0.0], [1.0, 1.0]))


def _fmix64_reference(k: int) -> int:
    """MurmurHash3 fmix64 in plain Python integers."""
    mask = (1 << 64) - 1
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & mask
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & mask
    k ^= k >> 33
    return k


def test_fmix64_matches_the_reference() -> None:
    keys = [0, 1, 2, 12345, (2 << 56) | 17, (1 << 64) - 1]
    got = fmix64(np.array(keys, dtype=np.uint64)).tolist()
    assert got == [_fmix64_reference(k) for k in keys]


def _keyed(key: str, salt: int = 1, partitions: int = 48) -> Design:
    return Design.model_validate(
        {
            "event_log": {
                "partitions": partitions,
                "partition_key": key,
                "key_salt_buckets": salt,
            },
            "orchestration": {"pattern": "orchestrator_worker"},
        }
    )


def test_event_id_spreads_round_robin() -> None:
    w = build_workload(_keyed("event_id"), runs_scenario(), rng())
    counts = np.bincount(partitions_of(_keyed("event_id"), w.groups["agent"]), minlength=48)
    assert counts.max() - counts.min() <= 1


def test_tenant_key_makes_hot_partitions_and_salt_spreads_them() -> None:
    """With a Zipf spread the largest tenant's partition gets far more than 1/48 of the events;
    salting the key into 8 buckets spreads one tenant over up to 8 partitions."""
    scenario = runs_scenario()
    w = build_workload(_keyed("tenant_id"), scenario, rng())
    agent = w.groups["agent"]
    counts = np.bincount(partitions_of(_keyed("tenant_id"), agent), minlength=48)
    assert counts.max() > 3 * agent.size / 48
    top = agent.tenant == 0
    unsalted = set(partitions_of(_keyed("tenant_id"), agent)[top].tolist())
    salted = set(partitions_of(_keyed("tenant_id", salt=8), agent)[top].tolist())
    assert len(unsalted) == 1
    assert 4 <= len(salted) <= 8


def test_run_key_keeps_a_run_on_one_partition() -> None:
    d = _keyed("run_id")
    w = build_workload(d, runs_scenario(), rng())
    agent = w.groups["agent"]
    parts = partitions_of(d, agent)
    per_run: dict[int, set[int]] = {r: set() for r in np.unique(agent.run[:500]).tolist()}
    for r, p in zip(agent.run[:500].tolist(), parts[:500].tolist(), strict=True):
        per_run[r].add(p)
    assert all(len(s) == 1 for s in per_run.values())


def test_topic_layout_orders_by_partition_then_arrival() -> None:
    d = _keyed("tenant_id", partitions=12)
    w = build_workload(d, runs_scenario(), rng())
    topic = build_topic(d, w.groups["tool"])
    assert topic.start[-1] == w.groups["tool"].size
    for p in range(12):
        seg = topic.arrival_s[topic.start[p] : topic.start[p + 1]]
        assert np.all(np.diff(seg) >= 0)
    ends = topic.log_end_per_partition(1800.0)
    assert ends.sum() == topic.log_end(1800.0)
