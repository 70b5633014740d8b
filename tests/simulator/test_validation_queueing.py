"""The simulator against queueing theory (worked-numbers items 14-16).

Each case runs seeded replications and asserts that the closed form lies inside the 95 %
confidence interval of the replication means (Student's t, ``n - 1`` degrees of freedom):

- M/M/1 (item 14): one partition, Poisson arrivals 3/s, exponential steps of mean 0.2 s.
  Wq = 0.3 s, W = 0.5 s. 20 replications of 10,000 s (about 30,000 events each).
- M/D/1 (item 15): one partition, Poisson arrivals 20/h, constant steps of 1/30 h (120 s).
  Wq = 0.0333 h. 30 replications of 168 h (about 3,360 events each).
- M/M/c (item 16): the tool-runner fleet is a pooled FCFS queue of c = runners slots; Poisson tool
  calls 0.2/s, exponential calls of mean 10 s (0.1/s per slot), spread over 4,096 partitions so a
  partition never holds a call back. c = 3: Wq = 4.4444 s; c = 4: Wq = 0.869565 s.
  10 replications of 100,000 s (about 20,000 calls each) per c.
"""

from __future__ import annotations

import math
import statistics

import pytest

from simulator import simulate
from simulator.design import Design
from simulator.scenario import Scenario

T_975 = {9: 2.262, 19: 2.093, 29: 2.045}
"""Student's t 97.5 % quantiles by degrees of freedom."""

UNLIMITED_MODEL = {"rpm": 10_000_000, "tpm": 10_000_000_000, "max_concurrency": 100_000}


def confidence_interval(values: list[float]) -> tuple[float, float]:
    """95 % confidence interval of the mean of ``values``."""
    n = len(values)
    mean = statistics.fmean(values)
    half = T_975[n - 1] * statistics.stdev(values) / math.sqrt(n)
    return mean - half, mean + half


def one_partition(rate: float, step: dict[str, object], duration: float) -> tuple[Design, Scenario]:
    design = Design.model_validate(
        {
            "event_log": {"partitions": 1, "partition_key": "event_id"},
            "delivery": {"commit": "after_processing"},
            # One record per poll: a 120 s step stays inside max.poll.interval.ms (300 s); a
            # batch of three queued records would outlast it and get the consumer kicked.
            "consumers": {
                "agent": {"instances": 1, "concurrency_per_instance": 1, "max_poll_records": 1}
            },
            "model": {"primary": UNLIMITED_MODEL},
        }
    )
    scenario = Scenario.model_validate(
        {
            "name": "one-partition",
            "duration_seconds": duration,
            "load": {
                "runs_per_second": None,
                "step_events_per_second": rate,
                "arrivals": "poisson",
                "step_time": {"agent_step": step},
            },
        }
    )
    return design, scenario


def test_mm1_wait_and_time_in_system() -> None:
    design, scenario = one_partition(
        3.0, {"distribution": "exponential", "mean_seconds": 0.2}, 10_000
    )
    waits, times = [], []
    for seed in range(20):
        m = simulate(design, scenario, seed).metrics
        waits.append(m.wait_mean_s)
        times.append(m.latency_mean_s)
    low, high = confidence_interval(waits)
    assert low <= 0.3 <= high
    low, high = confidence_interval(times)
    assert low <= 0.5 <= high


def test_md1_wait_is_half_of_mm1() -> None:
    hour = 3600.0
    design, scenario = one_partition(
        20 / hour, {"distribution": "constant", "mean_seconds": hour / 30}, 168 * hour
    )
    waits_h = [simulate(design, scenario, seed).metrics.wait_mean_s / hour for seed in range(30)]
    low, high = confidence_interval(waits_h)
    assert low <= 1 / 30 <= high
    # M/M/1 at the same load would wait rho / (mu - lambda) = (2/3) / 10 = 0.0667 h: twice as long.
    assert high < 0.0667


@pytest.mark.parametrize(("slots", "expected_wait_s"), [(3, 4.4444), (4, 0.869565)])
def test_mmc_wait_of_the_runner_pool(slots: int, expected_wait_s: float) -> None:
    design = Design.model_validate(
        {
            "event_log": {"partitions": 4096, "partition_key": "event_id"},
            "delivery": {"commit": "after_processing"},
            "consumers": {"tool": {"instances": 4, "concurrency_per_instance": 1024}},
            "tools": {"runners": slots, "concurrency_per_runner": 1},
            "orchestration": {"pattern": "orchestrator_worker"},
        }
    )
    scenario = Scenario.model_validate(
        {
            "name": "mmc",
            "duration_seconds": 100_000,
            "load": {
                "runs_per_second": 0.2,
                "arrivals": "poisson",
                "fan_out": {"model_calls": 0, "tool_calls": 1, "state_writes": 0},
                "step_time": {"tool_call": {"distribution": "exponential", "mean_seconds": 10.0}},
            },
        }
    )
    waits = [
        simulate(design, scenario, seed).metrics.by_group["tool"].wait_mean_s for seed in range(10)
    ]
    low, high = confidence_interval(waits)
    assert low <= expected_wait_s <= high
