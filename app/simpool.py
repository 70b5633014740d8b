"""Simulations run in a pool of worker processes, so a busy simulator never slows the pages.

One pool per app process (``configure`` is called by ``create_app``; the workers start on the first
simulation). Each simulation gets two bounds before and while it runs:

- **size**: the scenario's expected step events (runs per second x duration x step events per run
  after the design's fan-out, or step events per second x duration) must not exceed
  ``SIM_MAX_STEP_EVENTS``; a larger one is refused before any work, naming the scenario fields;
- **wall time**: a simulation still running after ``SIM_TIMEOUT_SECONDS`` has its worker process
  killed (pebble replaces it) and is refused with a message.

Both refusals are :class:`SimulationRefused` (HTTP 422, the fields named). A worker that dies for
another reason (killed by the OS for memory) is a :class:`SimulationFailed` (HTTP 500, logged).
The pool's functions take and return picklable values only: Design, Scenario, seed, and
SimulationResult.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import threading
from collections.abc import Callable
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass

from pebble import ProcessExpired, ProcessFuture, ProcessPool

from app.errors import BadInput, DesignlabError
from app.settings import Settings
from simulator.analytic import fan_out_per_run
from simulator.design import Design
from simulator.errors import FieldError
from simulator.result import SimulationResult
from simulator.scenario import Scenario

log = logging.getLogger(__name__)

MAX_TASKS_PER_WORKER = 500
"""A worker process is replaced after this many simulations (bounds memory growth)."""


class SimulationRefused(BadInput):
    """The simulation is too large or ran out of its wall-time budget (422, fields named)."""

    title = "Simulation refused"


class SimulationFailed(DesignlabError):
    """The worker process simulating died (500); the request may be retried."""

    title = "The simulation failed"


@dataclass(frozen=True)
class PoolLimits:
    """The bounds of every simulation: ``workers`` processes (>= 1), ``timeout_seconds`` of wall
    time each, ``max_step_events`` expected step events each."""

    workers: int
    timeout_seconds: float
    max_step_events: int


def limits_from(settings: Settings) -> PoolLimits:
    """The pool limits SIM_WORKERS, SIM_TIMEOUT_SECONDS and SIM_MAX_STEP_EVENTS ask for."""
    return PoolLimits(
        workers=settings.sim_workers or default_workers(),
        timeout_seconds=settings.sim_timeout_seconds,
        max_step_events=settings.sim_max_step_events,
    )


def default_workers() -> int:
    """One worker per CPU core but one (the one left serves pages), at least one."""
    return max(1, (os.cpu_count() or 1) - 1)


def expected_step_events(design: Design, scenario: Scenario) -> float:
    """Step events ``scenario`` offers ``design`` over its whole duration (retries not counted).

    Runs mode: ``runs_per_second x duration_seconds x (model calls + tool calls + state writes)``
    per run after the design's orchestration (``simulator.analytic.fan_out_per_run``); step events
    mode: ``step_events_per_second x duration_seconds``.
    """
    load = scenario.load
    if load.step_events_per_second is not None:
        return load.step_events_per_second * scenario.duration_seconds
    shape = fan_out_per_run(design, load)
    per_run = shape.model_calls + shape.tool_calls + shape.state_writes
    return (load.runs_per_second or 0.0) * scenario.duration_seconds * per_run


def check_size(design: Design, scenario: Scenario, max_step_events: int) -> None:
    """Raise SimulationRefused, naming the rate and duration fields, when the scenario is expected
    to offer more than ``max_step_events`` step events."""
    expected = expected_step_events(design, scenario)
    if expected <= max_step_events:
        return
    rate = (
        "load.step_events_per_second"
        if scenario.load.step_events_per_second is not None
        else "load.runs_per_second"
    )
    message = (
        f"about {expected:,.0f} step events, more than the {max_step_events:,} one simulation may "
        "take; shorten the duration or lower the rate"
    )
    raise SimulationRefused(
        f"Scenario {scenario.name!r} is too large to simulate here: {message}.",
        [
            FieldError(f"scenario {scenario.name}", None, "duration_seconds", message),
            FieldError(f"scenario {scenario.name}", None, rate, message),
        ],
    )


def _simulate_in_worker(design: Design, scenario: Scenario, seed: int) -> SimulationResult:
    """Runs in a worker process: ``simulator.simulate`` (imported there, not in the app)."""
    from simulator import simulate

    return simulate(design, scenario, seed)


class SimulationPool:
    """A pebble ProcessPool started on first use; thread-safe."""

    def __init__(self, limits: PoolLimits):
        self.limits = limits
        self._pool: ProcessPool | None = None
        self._lock = threading.Lock()

    def _get(self) -> ProcessPool:
        with self._lock:
            if self._pool is None or not self._pool.active:
                self._pool = ProcessPool(
                    max_workers=self.limits.workers,
                    max_tasks=MAX_TASKS_PER_WORKER,
                    # forkserver: workers do not inherit the app's threads and open connections.
                    context=multiprocessing.get_context("forkserver"),
                )
            return self._pool

    def _submit(self, design: Design, scenario: Scenario, seed: int) -> ProcessFuture:
        check_size(design, scenario, self.limits.max_step_events)
        return self._get().schedule(
            _simulate_in_worker, args=(design, scenario, seed), timeout=self.limits.timeout_seconds
        )

    def _refusal(self, exc: Exception, scenario: Scenario) -> Exception:
        """The DesignlabError a failed future's exception stands for (or ``exc`` itself)."""
        if isinstance(exc, FutureTimeout):
            budget = f"{self.limits.timeout_seconds:g} s"
            return SimulationRefused(
                f"Scenario {scenario.name!r} took longer than the {budget} one simulation may "
                "use, so it was stopped.",
                [FieldError(f"scenario {scenario.name}", None, "duration_seconds", "over budget")],
            )
        if isinstance(exc, ProcessExpired):
            log.error("simulation worker died", extra={"exitcode": exc.exitcode})
            return SimulationFailed("The simulation's worker process died; try again.")
        if isinstance(exc, ValueError):
            return BadInput(
                f"Scenario {scenario.name!r} cannot be simulated: {exc}",
                [FieldError(f"scenario {scenario.name}", None, "", str(exc))],
            )
        return exc

    def simulate(self, design: Design, scenario: Scenario, seed: int) -> SimulationResult:
        """``simulator.simulate(design, scenario, seed)`` in a worker process; blocks the calling
        thread (call it from a worker thread, or use :meth:`simulate_async`).

        Raises SimulationRefused (too large, or over the wall-time budget), SimulationFailed (the
        worker died), BadInput (the simulator's own ValueError for its bounds), and whatever else
        the simulator raises.
        """
        future = self._submit(design, scenario, seed)
        try:
            result: SimulationResult = future.result()
        except Exception as exc:
            raise self._refusal(exc, scenario) from exc
        return result

    async def simulate_async(
        self, design: Design, scenario: Scenario, seed: int
    ) -> SimulationResult:
        """:meth:`simulate` from async code: awaits the worker's future on the event loop, so no
        thread waits (threads stay free for the requests)."""
        future = self._submit(design, scenario, seed)
        try:
            result: SimulationResult = await asyncio.wrap_future(future)
        except Exception as exc:
            raise self._refusal(exc, scenario) from exc
        return result

    def close(self) -> None:
        """Stop the workers (a running simulation is killed); the pool restarts on next use."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.stop()
            pool.join(timeout=10)


_pool: SimulationPool | None = None


def configure(
    limits: PoolLimits, backend: Callable[[PoolLimits], SimulationPool] = SimulationPool
) -> SimulationPool:
    """Set this process's pool (replacing and stopping an earlier one) and return it; ``backend``
    builds it (app/sim_backend.py: this pool, or the task queue's client when REDIS_URL is set)."""
    global _pool
    if _pool is not None:
        _pool.close()
    _pool = backend(limits)
    return _pool


def shutdown() -> None:
    """Stop this process's pool and forget its limits (the app's lifespan ends with this), so a
    later app in the same process starts from its own settings."""
    global _pool
    if _pool is not None:
        _pool.close()
    _pool = None


def pool() -> SimulationPool:
    """This process's pool (one with default limits if ``configure`` was never called)."""
    global _pool
    if _pool is None:
        _pool = SimulationPool(limits_from(Settings()))
    return _pool


async def simulate(design: Design, scenario: Scenario, seed: int) -> SimulationResult:
    """Simulate in this process's pool without blocking the event loop; see
    :meth:`SimulationPool.simulate` for the bounds and the errors raised."""
    return await pool().simulate_async(design, scenario, seed)
