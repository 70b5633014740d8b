"""Capacity: busy partitions, the ceilings of each group, and the smallest of them; the estimate
and the simulation both read a group's capacity from here."""

from __future__ import annotations

import math

import pytest

from simulator import simulate
from simulator.assignment import member_ids, rebalance
from simulator.capacity import (
    LimitingFactor,
    busy_partitions,
    capacity_eps,
    capacity_limits,
    smallest_limit,
)
from simulator.design import Design, ModelProvider
from simulator.estimate import estimate
from simulator.scenario import Scenario


def test_item_9_capacity_of_48_busy_partitions() -> None:
    busy = busy_partitions(48, 4, 12)
    assert busy == 48
    assert capacity_eps(busy, 2.0) == 24
    assert capacity_eps(40, 2.0) == 20


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


def sized_design() -> Design:
    return Design.model_validate(
        {
            "event_log": {"partitions": 32},
            "consumers": {
                "agent": {"instances": 4, "concurrency_per_instance": 8},
                "tool": {"instances": 2, "concurrency_per_instance": 4},
                "state": {"instances": 2, "concurrency_per_instance": 8},
            },
            "model": {"primary": {"rpm": 900, "tpm": 1_500_000, "max_concurrency": 24}},
            "tools": {"runners": 3, "concurrency_per_runner": 2},
            "state_store": {"write_capacity_per_second": 15},
        }
    )


def test_each_group_lists_its_own_ceilings() -> None:
    design = sized_design()
    assert capacity_limits(design, "agent", 2.0, 1800) == {
        "partitions": 16,
        "instances x concurrency": 16,
        "provider concurrency": 12,
        "RPM": 15,
        "TPM": 1_500_000 / 60 / 1800,
    }
    assert capacity_limits(design, "tool", 0.5, 1800) == {
        "partitions": 64,
        "instances x concurrency": 16,
        "tool runners": 12,
    }
    assert capacity_limits(design, "state", 0.01, 1800) == {
        "partitions": pytest.approx(3200),
        "instances x concurrency": pytest.approx(1600),
        "state write capacity": 15,
    }


def test_survivors_and_the_fallback_set_their_own_ceilings() -> None:
    design = sized_design()
    fallback = ModelProvider(rpm=60, tpm=10**9, max_concurrency=100)
    limits = capacity_limits(design, "agent", 2.0, 1800, instances=1, provider=fallback)
    assert limits["instances x concurrency"] == 4
    assert limits["provider concurrency"] == 50
    assert limits["RPM"] == 1
    assert smallest_limit(limits) == (1, LimitingFactor.rpm)


def test_the_smallest_ceiling_is_the_capacity_and_the_first_wins_a_tie() -> None:
    assert smallest_limit({"partitions": 16, "RPM": 15, "TPM": 15}) == (15, LimitingFactor.rpm)
    with pytest.raises(ValueError):
        smallest_limit({})


def test_an_instant_step_sets_no_ceiling_and_an_unknown_group_is_an_error() -> None:
    design = sized_design()
    limits = capacity_limits(design, "tool", 0.0, 1800)
    assert limits == {
        "partitions": math.inf,
        "instances x concurrency": math.inf,
        "tool runners": math.inf,
    }
    with pytest.raises(ValueError, match="no consumer group 'billing'"):
        capacity_limits(design, "billing", 2.0, 1800)


def test_the_simulation_and_the_estimate_agree_on_every_groups_capacity() -> None:
    # Constant steps: the simulation's mean step is the scenario's, so both read the same
    # ceilings (the state group's step is the store's write latency in the simulation).
    design = sized_design()
    scenario = Scenario.model_validate(
        {
            "name": "constant",
            "deterministic": True,
            "duration_seconds": 120,
            "load": {
                "runs_per_second": 0.2,
                "arrivals": "even",
                "step_time": {
                    "agent_step": {"distribution": "constant", "mean_seconds": 2.0},
                    "tool_call": {"distribution": "constant", "mean_seconds": 0.5},
                },
            },
        }
    )
    simulated = simulate(design, scenario, seed=1).metrics.by_group
    estimated = estimate(design, scenario).by_group
    for name in ("agent", "tool"):
        assert simulated[name].capacity_eps == pytest.approx(estimated[name].capacity_eps)
