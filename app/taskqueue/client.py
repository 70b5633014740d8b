"""The web side of the task queue: a :class:`SimulationPool` whose simulations run on workers.

``simulate_async`` sends the job from a worker thread (publishing may retry while the broker
restarts) and then polls the job's entry in the result backend with ``redis.asyncio``, so the
event loop stays free and no thread waits; ``simulate`` does the same from a thread, blocking it.
Either waits at most TASK_WAIT_SECONDS (the job expires then, so no worker starts it later) and
answers like the embedded pool: the SimulationResult, SimulationRefused (size or time budget),
BadInput (the simulator's bounds) or Unavailable (503: no answer in time, the broker unreachable,
a worker that kept dying, a time budget run out with no design field to blame: the
infrastructure's fault, nothing counted).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
import weakref
from typing import Any

import anyio
import redis
import redis.asyncio
from celery import Celery
from celery.exceptions import TimeLimitExceeded

from app import metrics
from app.errors import BadInput, Unavailable
from app.settings import Settings
from app.sim_budget import slow_causes
from app.simpool import PoolLimits, SimulationPool, SimulationRefused, check_size
from app.taskqueue.outcome import JobOutcome
from app.taskqueue.queue_app import SIMULATE_TASK, configure
from simulator.design import Design
from simulator.result import SimulationResult
from simulator.scenario import Scenario

log = logging.getLogger(__name__)

FIRST_POLL_SECONDS = 0.02
LONGEST_POLL_SECONDS = 0.25
"""The result backend is read after 20 ms, then 1.5 times later each time, at most every 250 ms."""

FINISHED_STATES = {"SUCCESS", "FAILURE", "REVOKED"}


class QueuedSimulations(SimulationPool):
    """Simulations on ``designlab worker`` processes through Celery on ``settings.redis_url``.

    ``limits.max_step_events`` is checked here before sending (and again in the worker); the
    wall-time budget is the workers' time limits; ``limits.workers`` is not used.
    """

    def __init__(self, limits: PoolLimits, settings: Settings):
        super().__init__(limits)
        assert settings.redis_url, "QueuedSimulations needs REDIS_URL"
        self.settings = settings
        self.celery: Celery = configure(settings)
        self._redis = redis.Redis.from_url(
            settings.redis_url, socket_timeout=5, socket_connect_timeout=5
        )
        self._async: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, redis.asyncio.Redis] = (
            weakref.WeakKeyDictionary()
        )

    # -- sending --------------------------------------------------------------------------------

    def _send(self, design: Design, scenario: Scenario, seed: int) -> str:
        """Publish the job (blocks while the broker is retried); returns its id. Raises
        Unavailable when the broker cannot be reached."""
        job_id = uuid.uuid4().hex
        try:
            self.celery.send_task(
                SIMULATE_TASK,
                args=(design.model_dump_json(), scenario.model_dump_json(), seed),
                task_id=job_id,
                expires=self.settings.task_wait_seconds,
            )
        except Exception as exc:  # kombu's OperationalError and redis errors alike
            log.error("task queue unreachable", extra={"error": repr(exc)})
            raise Unavailable(
                "The simulation could not be queued (the task queue is unreachable); nothing "
                "was counted, try again."
            ) from exc
        metrics.JOBS_SUBMITTED.inc()
        return job_id

    # -- reading the answer ---------------------------------------------------------------------

    def _meta(self, raw: bytes | str | None) -> dict[str, Any] | None:
        if raw is None:
            return None
        meta: dict[str, Any] = self.celery.backend.decode_result(raw)
        return meta if meta.get("status") in FINISHED_STATES else None

    def _key(self, job_id: str) -> bytes:
        key: bytes = self.celery.backend.get_key_for_task(job_id)
        return key

    def _wait(self, job_id: str, deadline: float) -> dict[str, Any] | None:
        delay = FIRST_POLL_SECONDS
        while time.monotonic() < deadline:
            try:
                meta = self._meta(self._redis.get(self._key(job_id)))
            except redis.RedisError:
                meta = None  # the broker restarting: keep asking until the deadline
            if meta is not None:
                return meta
            time.sleep(min(delay, max(0.0, deadline - time.monotonic())))
            delay = min(delay * 1.5, LONGEST_POLL_SECONDS)
        return None

    def _async_client(self) -> redis.asyncio.Redis:
        loop = asyncio.get_running_loop()
        client = self._async.get(loop)
        if client is None:
            assert self.settings.redis_url
            client = redis.asyncio.Redis.from_url(
                self.settings.redis_url, socket_timeout=5, socket_connect_timeout=5
            )
            self._async[loop] = client
        return client

    async def _wait_async(self, job_id: str, deadline: float) -> dict[str, Any] | None:
        client = self._async_client()
        delay = FIRST_POLL_SECONDS
        while time.monotonic() < deadline:
            try:
                meta = self._meta(await client.get(self._key(job_id)))
            except redis.RedisError:
                meta = None
            if meta is not None:
                return meta
            await asyncio.sleep(min(delay, max(0.0, deadline - time.monotonic())))
            delay = min(delay * 1.5, LONGEST_POLL_SECONDS)
        return None

    def _over_time(self, design: Design, scenario: Scenario) -> Exception:
        """A job stopped by the worker's time limit: SimulationRefused naming the design field
        that makes it slow (as the embedded pool says), else Unavailable (503, nothing counted)."""
        budget = f"{self.limits.timeout_seconds:g} s"
        causes = slow_causes(design, scenario)
        if causes:
            named = "; ".join(f"{c.field}: {c.message}" for c in causes)
            return SimulationRefused(
                f"Scenario {scenario.name!r} took longer than the {budget} one simulation may "
                f"use, because of the design: {named}.",
                causes,
            )
        return Unavailable(
            f"The simulation of scenario {scenario.name!r} did not finish within its {budget} "
            "budget on a worker, so it was stopped. Nothing was counted; try again later: the "
            "workers may be busy.",
            retry_after_seconds=round(self.limits.timeout_seconds),
        )

    def _answer(
        self, meta: dict[str, Any] | None, design: Design, scenario: Scenario
    ) -> SimulationResult:
        """The result a finished job's ``meta`` holds, or the error it stands for."""
        if meta is None:
            raise Unavailable(
                f"No simulation worker answered within {self.settings.task_wait_seconds:g} s; "
                "nothing was counted, try again."
            )
        if meta["status"] != "SUCCESS":
            exc = self.celery.backend.exception_to_python(meta.get("result"))
            if isinstance(exc, TimeLimitExceeded):
                raise self._over_time(design, scenario)
            log.error("simulation job failed", extra={"error": repr(exc), "state": meta["status"]})
            raise Unavailable("The simulation's worker failed; nothing was counted, try again.")
        outcome = JobOutcome.model_validate(meta["result"])
        if outcome.outcome == "ok" and outcome.result_json is not None:
            if not outcome.cached:
                metrics.RUN_SECONDS.observe(outcome.run_seconds)
            return SimulationResult.model_validate_json(outcome.result_json)
        fields = [f.error() for f in outcome.fields]
        if outcome.outcome == "refused":
            raise SimulationRefused(outcome.message, fields)
        if outcome.outcome == "bad_input":
            raise BadInput(outcome.message, fields)
        raise Unavailable(outcome.message or "The simulation failed; try again.")

    def _observed(self, started: float, outcome: str) -> None:
        metrics.JOB_SECONDS.labels(outcome).observe(time.monotonic() - started)

    # -- the SimulationPool interface -----------------------------------------------------------

    def simulate(
        self, design: Design, scenario: Scenario, seed: int, *_: Any, **__: Any
    ) -> SimulationResult:
        """Run on a worker and wait in this thread; see the module's docstring for the errors."""
        check_size(design, scenario, self.limits.max_step_events)
        started = time.monotonic()
        metrics.JOBS_WAITING.inc()
        try:
            job_id = self._send(design, scenario, seed)
            meta = self._wait(job_id, started + self.settings.task_wait_seconds)
            result = self._answer(meta, design, scenario)
        except Exception as exc:
            self._observed(started, metrics.outcome_label(exc))
            raise
        finally:
            metrics.JOBS_WAITING.dec()
        self._observed(started, "ok")
        return result

    async def simulate_async(
        self, design: Design, scenario: Scenario, seed: int, *_: Any, **__: Any
    ) -> SimulationResult:
        """Run on a worker; the event loop is free while the job waits and runs."""
        check_size(design, scenario, self.limits.max_step_events)
        started = time.monotonic()
        metrics.JOBS_WAITING.inc()
        try:
            job_id = await anyio.to_thread.run_sync(self._send, design, scenario, seed)
            meta = await self._wait_async(job_id, started + self.settings.task_wait_seconds)
            result = self._answer(meta, design, scenario)
        except Exception as exc:
            self._observed(started, metrics.outcome_label(exc))
            raise
        finally:
            metrics.JOBS_WAITING.dec()
        self._observed(started, "ok")
        return result

    def close(self) -> None:
        """Close the Redis connections (jobs already sent still run on the workers)."""
        self._redis.close()
        for client in list(self._async.values()):
            with contextlib.suppress(RuntimeError):  # no loop: they close with the process
                asyncio.get_running_loop().create_task(client.aclose())
        self._async = weakref.WeakKeyDictionary()
