"""The worker's job: the cache first, the budgets, the result stored once, deliveries bounded.

The JSON round trip needs nothing; the jobs need a Redis server (REDIS_URL_TEST set; each test
runs its own) for their delivery counter, and a SQLite database for the result cache.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select

from app import sim_cache
from app.db import make_engine, make_sessionmaker, upgrade
from app.models import SimResult
from app.settings import Settings
from app.sim_cache import cache_key
from app.taskqueue import jobs
from simulator.design import Design
from simulator.files import load_design, load_scenario
from simulator.scenario import Scenario
from tests.live_server import REPO
from tests.taskqueue.redis_server import RedisServer

DESIGNS = sorted((REPO / "steps" / "designs").rglob("*.yaml"))
SCENARIOS = sorted((REPO / "steps" / "scenarios").glob("*.yaml"))


@pytest.mark.parametrize("path", DESIGNS, ids=lambda p: p.stem)
def test_a_design_sent_as_json_keeps_its_cache_key(path: Path):
    design = load_design(path)
    scenario = load_scenario(SCENARIOS[0])
    sent = Design.model_validate_json(design.model_dump_json())
    received = Scenario.model_validate_json(scenario.model_dump_json())
    assert cache_key(sent, received.name, received, 1) == cache_key(
        design, scenario.name, scenario, 1
    )


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_a_scenario_sent_as_json_keeps_its_cache_key(path: Path):
    scenario = load_scenario(path)
    received = Scenario.model_validate_json(scenario.model_dump_json())
    assert sim_cache.scenario_sha256(received) == sim_cache.scenario_sha256(scenario)


@pytest.fixture
def worker_env(tmp_path: Path, monkeypatch) -> Iterator[Settings]:
    """This process as a worker: its own Redis server and a migrated SQLite database."""
    server = RedisServer(tmp_path / "redis").start()
    url = f"sqlite:///{tmp_path / 'worker.sqlite3'}"
    upgrade(url)
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        env="test",
        secret_key="test-secret-key-not-for-production",
        database_url=url,
        redis_url=server.url,
        sim_max_step_events=2_000_000,
    )
    monkeypatch.setattr(jobs, "_settings", lambda: settings)
    jobs._forget_parent_connections()
    yield settings
    jobs._forget_parent_connections()
    server.stop()


def rows(settings: Settings) -> int:
    engine = make_engine(settings.database_url)
    with make_sessionmaker(engine)() as session:
        count = session.scalar(select(func.count()).select_from(SimResult))
    engine.dispose()
    return int(count or 0)


def small_job() -> tuple[str, str]:
    design = load_design(REPO / "steps" / "designs" / "reference.yaml")
    scenario = load_scenario(REPO / "steps" / "scenarios" / "peak.yaml")
    scenario = scenario.model_copy(update={"duration_seconds": 60.0})
    return design.model_dump_json(), scenario.model_dump_json()


def test_a_job_stores_its_result_once_and_a_second_delivery_reads_it(worker_env):
    design_json, scenario_json = small_job()
    first = jobs.run_job(design_json, scenario_json, 5, job_id="job-1", worker="w1")
    assert first.outcome == "ok" and not first.cached and first.run_seconds > 0
    again = jobs.run_job(design_json, scenario_json, 5, job_id="job-1", worker="w2")
    assert again.outcome == "ok" and again.cached and again.worker == "w2"
    assert again.result_json == first.result_json
    assert rows(worker_env) == 1


def test_a_job_over_the_size_budget_is_refused_naming_the_scenario_fields(worker_env):
    design_json, scenario_json = small_job()
    worker_env.sim_max_step_events = 10
    answer = jobs.run_job(design_json, scenario_json, 5, job_id="job-2", worker="w1")
    assert answer.outcome == "refused"
    assert "too large to simulate" in answer.message
    assert {f.field for f in answer.fields} == {"duration_seconds", "load.runs_per_second"}
    assert rows(worker_env) == 0


def test_a_job_that_keeps_killing_its_workers_fails_without_simulating(worker_env):
    design_json, scenario_json = small_job()
    for _ in range(jobs.MAX_DELIVERIES):
        jobs._deliveries("job-3")  # three workers took it and died
    answer = jobs.run_job(design_json, scenario_json, 5, job_id="job-3", worker="w4")
    assert answer.outcome == "failed"
    assert "nothing was counted" in answer.message
    assert rows(worker_env) == 0
