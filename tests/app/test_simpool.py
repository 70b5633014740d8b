"""The simulation pool: results identical to an in-process run, a size bound checked before any
work, a wall-time budget that kills the worker, and the bounds through the JSON API."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from app.simpool import (
    PoolLimits,
    SimulationPool,
    SimulationRefused,
    check_size,
    expected_step_events,
)
from simulator import simulate
from simulator.design import Design
from simulator.files import load_design, load_scenario

STEPS = Path(__file__).resolve().parents[2] / "steps"
REFERENCE = load_design(STEPS / "designs" / "reference.yaml")
PEAK = load_scenario(STEPS / "scenarios" / "peak.yaml")


@pytest.fixture
def pool():
    pool = SimulationPool(PoolLimits(workers=1, timeout_seconds=60, max_step_events=5_000_000))
    yield pool
    pool.close()


def test_a_pooled_run_is_byte_identical_to_an_in_process_run(pool):
    pooled = pool.simulate(REFERENCE, PEAK, 11)
    assert pooled.model_dump_json() == simulate(REFERENCE, PEAK, 11).model_dump_json()
    assert pooled.metrics.arrivals > 0


def test_the_expected_step_events_match_what_the_simulator_offers():
    expected = expected_step_events(REFERENCE, PEAK)
    arrivals = simulate(REFERENCE, PEAK).metrics.arrivals
    assert expected == pytest.approx(arrivals, rel=0.1)


def test_step_events_mode_is_rate_times_duration():
    scenario = PEAK.model_copy(
        update={
            "duration_seconds": 100.0,
            "load": PEAK.load.model_copy(
                update={"runs_per_second": None, "step_events_per_second": 20.0}
            ),
        }
    )
    assert expected_step_events(Design(), scenario) == 2000


def test_a_scenario_over_the_size_bound_is_refused_naming_its_fields():
    long = PEAK.model_copy(update={"duration_seconds": 7 * 24 * 3600.0})
    with pytest.raises(SimulationRefused) as refused:
        check_size(REFERENCE, long, 2_000_000)
    assert refused.value.status == 422
    assert {f.field for f in refused.value.fields} == {"duration_seconds", "load.runs_per_second"}
    assert "2,000,000" in refused.value.detail


def test_the_size_bound_is_checked_before_any_work():
    """A refused scenario never reaches a worker: the pool is not even started."""
    pool = SimulationPool(PoolLimits(workers=1, timeout_seconds=60, max_step_events=1000))
    with pytest.raises(SimulationRefused):
        pool.simulate(REFERENCE, PEAK, 1)
    assert pool._pool is None


def test_a_run_over_the_wall_time_budget_is_stopped_and_the_worker_freed():
    """Twelve simulated hours of the peak (1.5 million step events) take far longer than 1 s."""
    pool = SimulationPool(PoolLimits(workers=1, timeout_seconds=1, max_step_events=50_000_000))
    long = PEAK.model_copy(update={"duration_seconds": 12 * 3600.0})
    try:
        started = time.monotonic()
        with pytest.raises(SimulationRefused) as refused:
            pool.simulate(REFERENCE, long, 1)
        assert "longer than the 1 s" in refused.value.detail
        assert time.monotonic() - started < 15
        # the single worker was replaced: a short run gets through at once
        short = PEAK.model_copy(update={"duration_seconds": 60.0})
        pool.limits = PoolLimits(workers=1, timeout_seconds=60, max_step_events=50_000_000)
        assert pool.simulate(REFERENCE, short, 1).metrics.arrivals > 0
    finally:
        pool.close()


def test_the_api_answers_422_naming_the_fields_for_a_run_over_the_bound(make_client):
    client = make_client(sim_max_step_events=1000)
    response = client.post(
        "/api/v1/simulate?scenario=peak",
        content=(STEPS / "designs" / "reference.yaml").read_bytes(),
        headers={"content-type": "application/yaml"},
    )
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["title"] == "Simulation refused"
    assert {f["field"] for f in error["fields"]} == {"duration_seconds", "load.runs_per_second"}


def test_the_async_path_gives_the_same_result_without_a_thread(pool):
    result = asyncio.run(pool.simulate_async(REFERENCE, PEAK, 11))
    assert result.model_dump_json() == simulate(REFERENCE, PEAK, 11).model_dump_json()


def test_the_async_path_maps_a_timeout_to_a_refusal():
    pool = SimulationPool(PoolLimits(workers=1, timeout_seconds=1, max_step_events=50_000_000))
    long = PEAK.model_copy(update={"duration_seconds": 12 * 3600.0})
    try:
        with pytest.raises(SimulationRefused):
            asyncio.run(pool.simulate_async(REFERENCE, long, 1))
    finally:
        pool.close()
