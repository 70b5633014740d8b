"""A single-stage window held by one run's key drains one event at a time on its partition
(simulator.estimate.runs.busiest_key_backlog), whatever the group's slots."""

from __future__ import annotations

from pathlib import Path

import pytest

from simulator.design import Design, PartitionKey
from simulator.estimate import estimate
from simulator.estimate.runs import busiest_key_backlog
from simulator.files import load_design, load_scenario
from simulator.scenario import Scenario

STEPS = Path(__file__).resolve().parents[3] / "steps"


def _reference_and_rewind() -> tuple[Design, Scenario]:
    design = load_design(STEPS / "designs" / "reference.yaml")
    scenario = load_scenario(STEPS / "scenarios" / "rewind.yaml")
    return design, scenario


def test_a_window_shorter_than_a_run_sits_mostly_on_one_key() -> None:
    """0.02 events/s of 2 s steps: one run in flight, 20 steps each. 12 events: a run's end
    splits them with probability 12/20, the larger part 9 on average: 12 (1 - 12/80) = 10.2."""
    design, scenario = _reference_and_rewind()
    assert scenario.load.fan_out.model_calls == 20
    assert busiest_key_backlog(design, scenario, 12.0) == pytest.approx(10.2)
    # Beyond a run's length the busiest key holds one whole run.
    assert busiest_key_backlog(design, scenario, 3_500.0) == 20.0


def test_keys_that_spread_a_runs_events_hold_no_queue() -> None:
    design, scenario = _reference_and_rewind()
    for key in (PartitionKey.event_id, PartitionKey.arrival_timestamp):
        spread = design.model_copy(
            update={"event_log": design.event_log.model_copy(update={"partition_key": key})}
        )
        assert busiest_key_backlog(spread, scenario, 12.0) == 0.0


def test_salt_buckets_divide_a_runs_events() -> None:
    design, scenario = _reference_and_rewind()
    salted = design.model_copy(
        update={"event_log": design.event_log.model_copy(update={"key_salt_buckets": 4})}
    )
    assert busiest_key_backlog(salted, scenario, 12.0) == pytest.approx(3.0 * (1 - 3.0 / 80))


def test_the_rewind_drain_is_the_busiest_keys_events_in_a_row() -> None:
    """The estimate's rewind drain: 10.2 events x 2 s, not the 12 events' share of 96 slots."""
    design, scenario = _reference_and_rewind()
    e = estimate(design, scenario)
    assert e.drain_seconds == pytest.approx(10.2 * 2.0)
