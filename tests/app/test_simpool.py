"""The simulation pool: results identical to an in-process run, a size bound checked before any
work, a wall-time budget that counts time queued and kills the worker, a fair queue (issue 16,
case 11), infrastructure failures that are Unavailable (case 4), and the bounds through the API."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import pytest

from app.errors import Unavailable
from app.simpool import (
    FairQueue,
    Job,
    PoolLimits,
    SimulationPool,
    SimulationRefused,
    check_size,
    expected_step_events,
    share_per_client,
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


def test_a_warmed_pool_has_its_workers_before_the_first_simulation(pool):
    """warm() starts the workers (the fork server imports the simulator once for all of them),
    so the first simulation waits for no process start; its result is the same."""
    pool.warm().join(timeout=60)
    started = pool._get()
    assert started.active
    assert len(started._pool_manager.worker_manager.workers) == pool.limits.workers
    pooled = pool.simulate(REFERENCE, PEAK, 11)
    assert pooled.model_dump_json() == simulate(REFERENCE, PEAK, 11).model_dump_json()


def test_serve_starts_the_pool_at_once(monkeypatch):
    """designlab serve turns SIM_WARM_POOL on for the app it runs; the tests' apps leave it off."""
    import uvicorn

    from app.commands import serve as serve_command
    from app.settings import Settings

    monkeypatch.delenv("SIM_WARM_POOL", raising=False)
    monkeypatch.setattr("app.commands.serve.get_settings", lambda: Settings(_env_file=None))
    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: None)
    monkeypatch.setattr("app.db.upgrade", lambda url: None)
    serve_command.serve()
    assert os.environ["SIM_WARM_POOL"] == "1"
    assert Settings(_env_file=None).sim_warm_pool is True
    monkeypatch.delenv("SIM_WARM_POOL")
    assert Settings(_env_file=None).sim_warm_pool is False


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
    """Twelve simulated hours of the peak (1.5 million step events) take far longer than 1 s.
    Nothing in the design explains it, so it is the machine's limit: Unavailable (503), not a
    refusal of the design."""
    pool = SimulationPool(PoolLimits(workers=1, timeout_seconds=1, max_step_events=50_000_000))
    long = PEAK.model_copy(update={"duration_seconds": 12 * 3600.0})
    try:
        started = time.monotonic()
        with pytest.raises(Unavailable) as refused:
            pool.simulate(REFERENCE, long, 1)
        assert refused.value.status == 503
        assert "within its 1 s budget" in refused.value.detail
        assert "Nothing was counted; try again" in refused.value.detail
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


def test_the_async_path_maps_a_timeout_to_unavailable():
    pool = SimulationPool(PoolLimits(workers=1, timeout_seconds=1, max_step_events=50_000_000))
    long = PEAK.model_copy(update={"duration_seconds": 12 * 3600.0})
    try:
        with pytest.raises(Unavailable):
            asyncio.run(pool.simulate_async(REFERENCE, long, 1))
    finally:
        pool.close()


REPLAY = load_scenario(STEPS / "scenarios" / "replay.yaml")


def with_agent_poll_interval(design: Design, interval_ms: float) -> Design:
    """``design`` with the agent group's max_poll_interval_ms set to ``interval_ms``."""
    agent = design.consumers.agent.model_copy(update={"max_poll_interval_ms": interval_ms})
    consumers = design.consumers.model_copy(update={"agent": agent})
    return design.model_copy(update={"consumers": consumers})


def job(client: str, order: int) -> Job:
    return Job(client, REFERENCE, PEAK, 1, 0.0, 60.0, order)


def test_case_11_a_learner_with_nothing_running_starts_before_eight_queued_hostile_runs():
    """Eight hostile runs from one address are queued first; the learner's run, asked for last,
    is the next to start (the hostile client already has its share running)."""
    queue = FairQueue(workers=2, per_client=share_per_client(2))
    hostile = [job("address:10.0.0.66", n) for n in range(8)]
    for queued in hostile:
        queue.add(queued)
    first = queue.next_ready()
    assert first is hostile[0]
    assert queue.next_ready() is None, "one client may not hold both workers"
    learner = job("account:7", 8)
    queue.add(learner)
    assert queue.next_ready() is learner
    queue.finished(first)
    queue.finished(learner)
    assert queue.next_ready() is hostile[1]


def test_case_11_with_one_worker_a_client_with_nothing_running_goes_next():
    queue = FairQueue(workers=1, per_client=share_per_client(1))
    hostile = [job("address:10.0.0.66", n) for n in range(8)]
    for queued in hostile:
        queue.add(queued)
    running = queue.next_ready()
    learner = job("address:10.0.0.7", 8)
    queue.add(learner)
    assert queue.next_ready() is None
    assert running is not None
    queue.finished(running)
    assert queue.next_ready() is learner


def test_case_11_one_client_holds_at_most_half_the_workers():
    assert [share_per_client(w) for w in (1, 2, 3, 4, 8)] == [1, 1, 1, 2, 4]
    queue = FairQueue(workers=4, per_client=share_per_client(4))
    for n in range(8):
        queue.add(job("address:10.0.0.66", n))
    started = [queue.next_ready() for _ in range(4)]
    assert [j is not None for j in started] == [True, True, False, False]


def test_case_11_time_spent_queued_counts_against_the_wall_time_budget():
    """One worker, busy with a long run: a second run waits in the queue, and its 2 s budget runs
    out there; it is dropped as Unavailable (the machine is busy), not run late."""
    pool = SimulationPool(PoolLimits(workers=1, timeout_seconds=2, max_step_events=50_000_000))
    long = PEAK.model_copy(update={"duration_seconds": 12 * 3600.0})
    short = PEAK.model_copy(update={"duration_seconds": 60.0})
    try:
        hog = pool.submit(REFERENCE, long, 1, "address:10.0.0.66")
        with pytest.raises(Unavailable) as dropped:
            pool.simulate(REFERENCE, short, 1, "address:10.0.0.7")
        assert dropped.value.status == 503
        assert "waited" in dropped.value.detail
        with pytest.raises(Unavailable):
            hog.future.result(timeout=30)
    finally:
        pool.close()


def test_case_11_a_design_that_makes_replay_slow_is_refused_up_front_naming_the_field():
    """max_poll_interval_ms: 1 makes the agent group's watchdog look every 0.1 ms for 51 simulated
    hours: about 1.8 billion looks. Refused before any work, naming the design field."""
    hostile = with_agent_poll_interval(REFERENCE, 1)
    with pytest.raises(SimulationRefused) as refused:
        check_size(hostile, REPLAY, 2_000_000)
    fields = [f.field for f in refused.value.fields]
    assert fields == ["consumers.agent.max_poll_interval_ms"]
    assert "max_poll_interval_ms" in refused.value.detail
    check_size(REFERENCE, REPLAY, 2_000_000)  # the reference design's replay is fine


def test_case_11_a_timeout_the_design_explains_names_the_field():
    """A run over its budget whose design has a poll interval shorter than a step is refused
    naming that field (422), not blamed on the machine."""
    slow = with_agent_poll_interval(REFERENCE, 50)
    pool = SimulationPool(PoolLimits(workers=1, timeout_seconds=1, max_step_events=10**12))
    long = PEAK.model_copy(update={"duration_seconds": 12 * 3600.0})
    try:
        with pytest.raises(SimulationRefused) as refused:
            pool.simulate(slow, long, 1)
        assert refused.value.status == 422
        assert [f.field for f in refused.value.fields] == ["consumers.agent.max_poll_interval_ms"]
        assert "shorter than one agent step" in refused.value.detail
    finally:
        pool.close()


def test_case_4_a_worker_killed_mid_run_is_unavailable_and_the_pool_recovers():
    """SIGKILL the worker while it simulates: the run is Unavailable (503, try again), not an
    error of the design, and the next run gets through."""
    pool = SimulationPool(PoolLimits(workers=1, timeout_seconds=60, max_step_events=50_000_000))
    long = PEAK.model_copy(update={"duration_seconds": 12 * 3600.0})
    try:
        running = pool.submit(REFERENCE, long, 1)
        deadline = time.monotonic() + 30
        workers: list[int] = []
        while not workers and time.monotonic() < deadline:
            inner = pool._pool
            if inner is not None:
                workers = list(inner._pool_manager.worker_manager.workers)
            time.sleep(0.2)
        time.sleep(1.0)  # the worker has taken the task
        os.kill(workers[0], signal.SIGKILL)
        with pytest.raises(Unavailable) as died:
            running.future.result(timeout=30)
        assert died.value.status == 503
        assert died.value.retry_after_seconds >= 1
        assert "Nothing was counted; try again" in died.value.detail
        short = PEAK.model_copy(update={"duration_seconds": 60.0})
        assert pool.simulate(REFERENCE, short, 1).metrics.arrivals > 0
    finally:
        pool.close()


def test_case_11_a_vanishing_poll_interval_is_refused_up_front_not_a_crash():
    """5e-324 ms: the watchdog's period rounds to zero; refused naming the field, no division
    by zero."""
    with pytest.raises(SimulationRefused) as refused:
        check_size(with_agent_poll_interval(REFERENCE, 5e-324), PEAK, 2_000_000)
    assert [f.field for f in refused.value.fields] == ["consumers.agent.max_poll_interval_ms"]


def test_closing_the_pool_fails_waiting_runs_and_it_restarts_on_next_use():
    pool = SimulationPool(PoolLimits(workers=1, timeout_seconds=60, max_step_events=50_000_000))
    long = PEAK.model_copy(update={"duration_seconds": 12 * 3600.0})
    short = PEAK.model_copy(update={"duration_seconds": 60.0})
    try:
        pool.submit(REFERENCE, long, 1, "address:10.0.0.66")
        waiting = pool.submit(REFERENCE, short, 1, "address:10.0.0.7")
        pool.close()
        with pytest.raises(Unavailable):
            waiting.future.result(timeout=5)
        assert pool.simulate(REFERENCE, short, 1).metrics.arrivals > 0
    finally:
        pool.close()


def test_case_11_in_the_pool_a_learners_run_starts_before_eight_hostile_ones_queued_earlier():
    """One worker busy with a hostile run, seven more hostile runs queued, then a learner's: the
    learner's starts next. Asserts the order the pool started them in, not how long they took."""
    pool = SimulationPool(PoolLimits(workers=1, timeout_seconds=120, max_step_events=50_000_000))
    hog = PEAK.model_copy(update={"duration_seconds": 1800.0})
    short = PEAK.model_copy(update={"duration_seconds": 60.0})
    try:
        hostile = [pool.submit(REFERENCE, hog, 1, "address:10.0.0.66")]
        hostile += [pool.submit(REFERENCE, short, n, "address:10.0.0.66") for n in range(2, 9)]
        learner = pool.submit(REFERENCE, short, 1, "account:7")
        assert learner.future.result(timeout=110).metrics.arrivals > 0
        for queued in hostile:
            queued.future.result(timeout=110)
        started = sorted([*hostile, learner], key=lambda j: j.started_at or float("inf"))
        assert started[:2] == [hostile[0], learner]
    finally:
        pool.close()
