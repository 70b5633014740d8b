"""The simulation job a ``designlab worker`` runs, and how a worker process reaches the database.

One job simulates one design under one scenario with one seed:

1. it counts its delivery (a Redis counter per job id): a job handed out more than
   ``MAX_DELIVERIES`` times (it killed every worker that took it) answers ``failed``;
2. it reads the shared result cache (app/sim_cache.py, keyed by design hash, scenario, seed and
   simulator version): a job run again after its first worker died once the result was stored, or
   a job another learner's identical design already ran, is answered from it;
3. it checks the size budget (``app.simpool.check_size``) and simulates; the soft time limit
   (SIM_TIMEOUT_SECONDS) stops it with a refusal, the hard one kills the process;
4. it stores the result in the cache with ``INSERT ... ON CONFLICT DO NOTHING``, so a result is
   recorded once however often the job ran, and answers a :class:`JobOutcome`.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Any

import redis
from celery import Task
from celery.exceptions import SoftTimeLimitExceeded
from celery.signals import worker_process_init
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from app.db import make_engine, make_sessionmaker
from app.settings import Settings, get_settings
from app.sim_cache import cache_key, cached, store
from app.simpool import SimulationRefused, check_size
from app.taskqueue.outcome import JobField, JobOutcome
from app.taskqueue.queue_app import SIMULATE_TASK, celery
from simulator.design import Design
from simulator.errors import FieldError
from simulator.result import SimulationResult
from simulator.scenario import Scenario

log = logging.getLogger(__name__)

MAX_DELIVERIES = 3
"""A job taken this many times by workers that died is answered ``failed`` on the next delivery."""

TEST_GATE_ENV = "DESIGNLAB_TEST_JOB_GATE"
"""Test-only: a folder. When set, each job writes ``started.<worker>.<job id>`` there before it
simulates and waits until a file ``open`` exists (within its time limit), so a test can hold jobs
in flight for exactly as long as it needs. Never set it in production."""

_engine: Engine | None = None
_sessions: sessionmaker[Session] | None = None
_redis: redis.Redis | None = None


@worker_process_init.connect
def _forget_parent_connections(**_: Any) -> None:
    """A new worker process opens its own database and Redis connections."""
    global _engine, _sessions, _redis
    _engine, _sessions, _redis = None, None, None


def _settings() -> Settings:
    return get_settings()


def _session() -> Session:
    global _engine, _sessions
    if _sessions is None:
        _engine = make_engine(_settings().database_url)
        _sessions = make_sessionmaker(_engine)
    return _sessions()


def _deliveries(job_id: str) -> int:
    """How many times this job was handed to a worker, this time included."""
    global _redis
    settings = _settings()
    if _redis is None:
        assert settings.redis_url, "a worker needs REDIS_URL"
        _redis = redis.Redis.from_url(settings.redis_url, socket_timeout=10)
    key = f"designlab:deliveries:{job_id}"
    count = int(_redis.incr(key))
    _redis.expire(key, int(settings.task_wait_seconds * 2) + 60)
    return count


def _wait_at_test_gate(job_id: str, worker: str) -> None:
    gate = os.environ.get(TEST_GATE_ENV)
    if not gate:
        return
    folder = Path(gate)
    (folder / f"started.{worker}.{job_id}").write_text(str(os.getpid()))
    while not (folder / "open").exists():
        time.sleep(0.05)


def _refused(exc: SimulationRefused) -> JobOutcome:
    return JobOutcome(
        outcome="refused", message=exc.detail, fields=[JobField.of(f) for f in exc.fields]
    )


def _over_budget(scenario: Scenario, budget_seconds: float) -> JobOutcome:
    message = (
        f"Scenario {scenario.name!r} took longer than the {budget_seconds:g} s one simulation "
        "may use, so it was stopped."
    )
    error = FieldError(f"scenario {scenario.name}", None, "duration_seconds", "over budget")
    return JobOutcome(outcome="refused", message=message, fields=[JobField.of(error)])


def run_job(
    design_json: str, scenario_json: str, seed: int, *, job_id: str, worker: str
) -> JobOutcome:
    """Steps 1-4 above for one delivery of job ``job_id`` on ``worker``; raises nothing the
    simulator's input can cause (a bug in the simulator escapes, and the job fails)."""
    if _deliveries(job_id) > MAX_DELIVERIES:
        log.error("simulation job abandoned", extra={"job_id": job_id, "worker": worker})
        return JobOutcome(
            outcome="failed",
            message=f"The simulation stopped {MAX_DELIVERIES} workers; nothing was counted.",
            worker=worker,
        )
    settings = _settings()
    design = Design.model_validate_json(design_json)
    scenario = Scenario.model_validate_json(scenario_json)
    key = cache_key(design, scenario.name, scenario, seed)
    with _session() as session:
        found = cached(session, [key]).get(key)
    if found is not None:
        log.info("simulation job done", extra={"job_id": job_id, "worker": worker, "cached": True})
        return JobOutcome(
            outcome="ok", result_json=found.model_dump_json(), cached=True, worker=worker
        )
    started = time.monotonic()
    try:
        check_size(design, scenario, settings.sim_max_step_events)
        _wait_at_test_gate(job_id, worker)
        result = _simulate(design, scenario, seed)
    except SimulationRefused as exc:
        return _refused(exc)
    except SoftTimeLimitExceeded:
        return _over_budget(scenario, settings.sim_timeout_seconds)
    except ValueError as exc:
        message = f"Scenario {scenario.name!r} cannot be simulated: {exc}"
        error = FieldError(f"scenario {scenario.name}", None, "", str(exc))
        return JobOutcome(outcome="bad_input", message=message, fields=[JobField.of(error)])
    run_seconds = time.monotonic() - started
    with _session() as session:
        store(session, key, result)
        session.commit()
    log.info(
        "simulation job done",
        extra={"job_id": job_id, "worker": worker, "cached": False, "run_seconds": run_seconds},
    )
    return JobOutcome(
        outcome="ok", result_json=result.model_dump_json(), run_seconds=run_seconds, worker=worker
    )


def _simulate(design: Design, scenario: Scenario, seed: int) -> SimulationResult:
    from simulator import simulate

    return simulate(design, scenario, seed)


@celery.task(name=SIMULATE_TASK, bind=True)
def simulate_job(self: Task, design_json: str, scenario_json: str, seed: int) -> dict[str, Any]:
    """The Celery task: :func:`run_job` for this delivery; answers a JobOutcome as a dict."""
    job_id = str(self.request.id)
    worker = str(self.request.hostname or os.getpid())
    return run_job(design_json, scenario_json, seed, job_id=job_id, worker=worker).model_dump()
