"""Simulations run in a pool of worker processes, so a busy simulator never slows the pages.

One pool per app process (``configure`` is called by ``create_app``; the workers start on the first
simulation). Each simulation is bounded before and while it runs:

- **size** (app.sim_budget): the simulated events the scenario is expected to take the design
  through must not exceed ``SIM_MAX_STEP_EVENTS``; a larger one is refused before any work,
  naming the field that makes it big (:class:`SimulationRefused`, 422; not an attempt);
- **wall time**: ``SIM_TIMEOUT_SECONDS`` counts from the moment the simulation is asked for, time
  spent waiting for a worker included. A simulation still queued at its deadline is dropped, one
  still running has its worker process killed (pebble replaces it);
- **fairness**: one client (an account, else an address) has at most :func:`share_per_client`
  simulations running at once, and a free worker goes to the waiting simulation whose client has
  the fewest running (a client with nothing running goes first), then whose client started one
  least recently (round robin), then to the oldest (:class:`FairQueue`).

An infrastructure failure (the worker died, the pool broke, the wall-time budget ran out while
the machine was busy) is :class:`app.errors.Unavailable` (503 with ``Retry-After``; logged; never
recorded as an attempt). A run over the wall-time budget for a reason the design shows (app.
sim_budget.slow_causes) is a SimulationRefused naming that field. The pool's functions take and
return picklable values only: Design, Scenario, seed, and SimulationResult.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import CancelledError, Future, InvalidStateError
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field

from pebble import ProcessExpired, ProcessFuture, ProcessPool

from app.errors import Unavailable
from app.settings import Settings
from app.sim_budget import (
    SimulationRefused,
    bounds_error,
    check_size,
    expected_step_events,
    slow_causes,
)
from simulator.design import Design
from simulator.result import SimulationResult
from simulator.scenario import Scenario

__all__ = [
    "FairQueue",
    "PoolLimits",
    "SimulationPool",
    "SimulationRefused",
    "check_size",
    "client_key",
    "expected_step_events",
    "share_per_client",
]

log = logging.getLogger(__name__)

MAX_TASKS_PER_WORKER = 500
"""A worker process is replaced after this many simulations (bounds memory growth)."""

GRACE_SECONDS = 5.0
"""How long past its deadline a running simulation's waiter waits for pebble to stop it before
cancelling it itself."""

RETRY_AFTER_WORKER_DIED_SECONDS = 2
"""Retry-After of a simulation whose worker died or whose pool broke (a new worker starts)."""

ANONYMOUS = "address:unknown"


def client_key(account_id: int | None, address: str | None) -> str:
    """Who a simulation is run for, for the pool's fairness: ``account:<id>`` for a signed-in
    account (a guest has none), else ``address:<client address>``."""
    if account_id is not None:
        return f"account:{account_id}"
    return f"address:{address}" if address else ANONYMOUS


@dataclass(frozen=True)
class PoolLimits:
    """The bounds of every simulation: ``workers`` processes (>= 1), ``timeout_seconds`` of wall
    time each (queued and running), ``max_step_events`` expected simulated events each."""

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


def share_per_client(workers: int) -> int:
    """Simulations one client may have running at once: ``max(1, workers // 2)``, so with two
    workers or more a single client never holds them all."""
    return max(1, workers // 2)


@dataclass(eq=False)
class Job:
    """One simulation asked for: who for, what, by when (``deadline``, time.monotonic seconds),
    its result (``future``) and, once started, pebble's future."""

    client: str
    design: Design
    scenario: Scenario
    seed: int
    asked_at: float
    deadline: float
    order: int
    future: Future[SimulationResult] = field(default_factory=Future)
    started_at: float | None = None
    running: ProcessFuture | None = None
    queue: FairQueue | None = None
    """The queue that started it (a pool's queue is replaced when the pool closes)."""


class FairQueue:
    """The waiting simulations and who has how many running; not thread-safe (the pool locks).

    :meth:`next_ready` picks, among the waiting jobs whose client has fewer than ``per_client``
    running, the one whose client has the fewest running; among equals the client whose last
    start is the oldest (a client never started, or idle since, goes first: round robin), then
    the oldest job; none while ``workers`` jobs run.
    """

    def __init__(self, workers: int, per_client: int):
        self.workers = workers
        self.per_client = per_client
        self.waiting: list[Job] = []
        self.running: dict[str, int] = {}
        self.last_start: dict[str, int] = {}
        """The start count at each busy client's last start (forgotten once it is idle)."""
        self._starts = 0

    @property
    def running_total(self) -> int:
        """Jobs running now."""
        return sum(self.running.values())

    def add(self, job: Job) -> None:
        """Queue ``job``."""
        self.waiting.append(job)

    def remove(self, job: Job) -> bool:
        """Take ``job`` out of the queue; False when it was not waiting."""
        if job not in self.waiting:
            return False
        self.waiting.remove(job)
        idle = job.client not in self.running
        if idle and not any(j.client == job.client for j in self.waiting):
            self.last_start.pop(job.client, None)
        return True

    def next_ready(self) -> Job | None:
        """The job to start now (marked running for its client), or None."""
        if self.running_total >= self.workers:
            return None
        eligible = [j for j in self.waiting if self.running.get(j.client, 0) < self.per_client]
        if not eligible:
            return None
        job = min(
            eligible,
            key=lambda j: (
                self.running.get(j.client, 0),
                self.last_start.get(j.client, -1),
                j.order,
            ),
        )
        self.waiting.remove(job)
        self.running[job.client] = self.running.get(job.client, 0) + 1
        self._starts += 1
        self.last_start[job.client] = self._starts
        return job

    def finished(self, job: Job) -> None:
        """``job``, started by :meth:`next_ready`, no longer runs."""
        left = self.running.get(job.client, 0) - 1
        if left > 0:
            self.running[job.client] = left
            return
        self.running.pop(job.client, None)
        if not any(j.client == job.client for j in self.waiting):
            self.last_start.pop(job.client, None)


WORKER_PRELOAD = ("simulator.simulation", "app.simpool")
"""Modules the fork server imports once for every worker it forks."""


def _warm_worker() -> None:
    """An empty task: it makes a worker start (its modules come with the fork server)."""


def _simulate_in_worker(design: Design, scenario: Scenario, seed: int) -> SimulationResult:
    """Runs in a worker process: ``simulator.simulate`` (imported there, not in the app)."""
    from simulator import simulate

    return simulate(design, scenario, seed)


class SimulationPool:
    """A pebble ProcessPool started on first use, fed by a :class:`FairQueue`; thread-safe.

    At most ``workers`` simulations are handed to pebble at a time, so pebble never queues one:
    every wait happens in the fair queue, where it counts against the wall-time budget.
    """

    def __init__(self, limits: PoolLimits):
        self.limits = limits
        self._pool: ProcessPool | None = None
        self._lock = threading.RLock()
        self._queue = FairQueue(limits.workers, share_per_client(limits.workers))
        self._order = itertools.count()

    def _get(self) -> ProcessPool:
        with self._lock:
            if self._pool is None or not self._pool.active:
                # forkserver: workers do not inherit the app's threads and open connections.
                # The fork server imports the simulator once (a preload), so every worker it
                # forks, the first and each replacement, starts with it loaded.
                context = multiprocessing.get_context("forkserver")
                context.set_forkserver_preload(list(WORKER_PRELOAD))
                self._pool = ProcessPool(
                    max_workers=self.limits.workers,
                    max_tasks=MAX_TASKS_PER_WORKER,
                    context=context,
                )
            return self._pool

    def warm(self) -> threading.Thread:
        """Start the worker processes now, in a background thread (returned, to join if
        wanted): each runs one empty task, so the pool, its fork server and its workers exist
        before the first simulation asks for them."""

        def start() -> None:
            pool = None
            try:
                pool = self._get()
                futures = [pool.schedule(_warm_worker) for _ in range(self.limits.workers)]
                for future in futures:
                    future.result(timeout=60)
            except Exception:  # a pool that cannot start says so at the first simulation
                if pool is None or self._pool is pool:  # not closed meanwhile
                    log.warning("simulation pool warm-up failed", exc_info=True)

        thread = threading.Thread(target=start, name="simpool-warm", daemon=True)
        thread.start()
        return thread

    def submit(self, design: Design, scenario: Scenario, seed: int, client: str = ANONYMOUS) -> Job:
        """Check the size budget (raises SimulationRefused), queue the simulation for ``client``
        and start what the queue allows; returns the Job (its ``future`` gives the result)."""
        check_size(design, scenario, self.limits.max_step_events)
        now = time.monotonic()
        job = Job(
            client, design, scenario, seed, now, now + self.limits.timeout_seconds,
            next(self._order),
        )  # fmt: skip
        job.future.add_done_callback(lambda _f: self._forget(job))
        with self._lock:
            self._queue.add(job)
        self._dispatch()
        return job

    def _dispatch(self) -> None:
        """Start every job the queue lets run now (a job past its deadline is dropped)."""
        with self._lock:
            while (job := self._queue.next_ready()) is not None:
                remaining = job.deadline - time.monotonic()
                if remaining <= 0:
                    self._queue.finished(job)
                    self._fail(job, self._busy(job))
                    continue
                job.started_at = time.monotonic()
                job.queue = self._queue
                try:
                    job.running = self._get().schedule(
                        _simulate_in_worker,
                        args=(job.design, job.scenario, job.seed),
                        timeout=remaining,
                    )
                except Exception as exc:  # a pool that cannot take work is broken
                    self._queue.finished(job)
                    self._fail(job, self._broken(exc))
                    continue
                job.running.add_done_callback(functools.partial(self._ran, job))

    def _ran(self, job: Job, running: ProcessFuture) -> None:
        """pebble finished ``job`` (in pebble's thread): hand over its outcome, start the next."""
        with self._lock:
            (job.queue or self._queue).finished(job)
        if job.future.cancelled():  # its asker gave up: nothing to hand over
            self._dispatch()
            return
        try:
            result = running.result()
        except (CancelledError, FutureTimeout, ProcessExpired, BrokenProcessPool) as exc:
            self._fail(job, self._refusal(exc, job))
        except Exception as exc:
            self._fail(job, exc)
        else:
            with contextlib.suppress(InvalidStateError):  # the asker gave up meanwhile
                job.future.set_result(result)
        self._dispatch()

    @staticmethod
    def _fail(job: Job, exc: BaseException) -> None:
        with contextlib.suppress(InvalidStateError):
            job.future.set_exception(exc)

    def _forget(self, job: Job) -> None:
        """``job.future`` is done: a job cancelled by its asker leaves the queue or is stopped."""
        if not job.future.cancelled():
            return
        with self._lock:
            queued = self._queue.remove(job)
        if not queued and job.running is not None:
            job.running.cancel()  # kills the worker; pebble starts another

    def _busy(self, job: Job) -> Unavailable:
        waited = (job.started_at or time.monotonic()) - job.asked_at
        budget = self.limits.timeout_seconds
        log.warning(
            "simulation dropped: its wall-time budget ran out while queued",
            extra={"scenario": job.scenario.name, "client": job.client, "waited_s": waited},
        )
        return Unavailable(
            f"The simulation of scenario {job.scenario.name!r} waited {waited:.0f} s for a free "
            f"worker, its whole {budget:g} s budget: the simulator is busy. Nothing was counted; "
            f"try again in {budget:.0f} s.",
            retry_after_seconds=round(budget),
        )

    def _broken(self, exc: BaseException) -> Unavailable:
        log.error("simulation pool broken: %s: %s", type(exc).__name__, exc)
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.stop()
        return Unavailable(
            "The simulator's worker processes stopped, so the simulation could not run. Nothing "
            f"was counted; try again in {RETRY_AFTER_WORKER_DIED_SECONDS} s.",
            retry_after_seconds=RETRY_AFTER_WORKER_DIED_SECONDS,
        )

    def _refusal(self, exc: BaseException, job: Job) -> Exception:
        """The error a failed run stands for: over the wall-time budget (SimulationRefused when
        the design shows why, else Unavailable), or a dead worker or pool (Unavailable)."""
        scenario = job.scenario
        if isinstance(exc, FutureTimeout | CancelledError):
            budget = f"{self.limits.timeout_seconds:g} s"
            started = job.started_at or job.asked_at
            waited = started - job.asked_at
            ran = time.monotonic() - started
            causes = slow_causes(job.design, scenario)
            if causes:
                named = "; ".join(f"{c.field}: {c.message}" for c in causes)
                return SimulationRefused(
                    f"Scenario {scenario.name!r} took longer than the {budget} one simulation may "
                    f"use, because of the design: {named}.",
                    causes,
                )
            log.warning(
                "simulation over its wall-time budget",
                extra={"scenario": scenario.name, "waited_s": waited, "ran_s": ran},
            )
            return Unavailable(
                f"The simulation of scenario {scenario.name!r} did not finish within its {budget} "
                f"budget (it waited {waited:.0f} s for a worker and ran {ran:.0f} s), so it was "
                f"stopped. Nothing was counted; try again in {budget}: the simulator may be "
                "busy.",
                retry_after_seconds=round(self.limits.timeout_seconds),
            )
        if isinstance(exc, ProcessExpired):
            log.error(
                "simulation worker died",
                extra={"scenario": scenario.name, "exitcode": exc.exitcode},
            )
            return Unavailable(
                f"The simulation of scenario {scenario.name!r} could not run: its worker process "
                "stopped (the machine may be short of memory). Nothing was counted; try again in "
                f"{RETRY_AFTER_WORKER_DIED_SECONDS} s.",
                retry_after_seconds=RETRY_AFTER_WORKER_DIED_SECONDS,
            )
        return self._broken(exc)

    def _expire(self, job: Job) -> None:
        """``job``'s deadline passed: drop it if still queued (Unavailable); a running one is
        stopped by pebble's own timeout, and cancelled here if it is GRACE_SECONDS late."""
        with self._lock:
            queued = self._queue.remove(job)
        if queued:
            job.started_at = time.monotonic()
            self._fail(job, self._busy(job))
        elif time.monotonic() > job.deadline + GRACE_SECONDS and job.running is not None:
            job.running.cancel()
            self._fail(job, self._refusal(FutureTimeout(), job))

    def simulate(
        self, design: Design, scenario: Scenario, seed: int, client: str = ANONYMOUS
    ) -> SimulationResult:
        """``simulator.simulate(design, scenario, seed)`` in a worker process for ``client``;
        blocks the calling thread (call it from a worker thread, or use :meth:`simulate_async`).

        Raises SimulationRefused (too large, or too slow because of a named design field),
        Unavailable (the budget ran out while busy, the worker died, the pool broke), BadInput
        (the simulator's own ValueError for its bounds), and whatever else the simulator raises.
        """
        job = self.submit(design, scenario, seed, client)
        while True:
            try:
                result: SimulationResult = job.future.result(
                    timeout=max(0.0, job.deadline - time.monotonic()) + 0.05
                )
                return result
            except FutureTimeout:
                self._expire(job)
                if not job.future.done():
                    time.sleep(0.05)
            except ValueError as exc:
                raise bounds_error(exc, scenario) from exc

    async def simulate_async(
        self, design: Design, scenario: Scenario, seed: int, client: str = ANONYMOUS
    ) -> SimulationResult:
        """:meth:`simulate` from async code: awaits the job on the event loop, so no thread waits
        (threads stay free for the requests). Cancelling the awaiting task drops the job."""
        job = self.submit(design, scenario, seed, client)
        waiting = asyncio.wrap_future(job.future)
        while True:
            left = max(0.0, job.deadline - time.monotonic()) + 0.05
            done, _ = await asyncio.wait({waiting}, timeout=left)
            if done:
                break
            self._expire(job)
            if not job.future.done():
                await asyncio.sleep(0.05)
        try:
            return waiting.result()
        except ValueError as exc:
            raise bounds_error(exc, scenario) from exc

    def close(self) -> None:
        """Stop the workers (a running simulation is killed, a waiting one is Unavailable); the
        pool restarts on next use, with an empty queue."""
        with self._lock:
            pool, self._pool = self._pool, None
            waiting = list(self._queue.waiting)
            self._queue = FairQueue(self.limits.workers, share_per_client(self.limits.workers))
        for job in waiting:
            self._fail(
                job,
                Unavailable(
                    "The simulator is restarting, so the simulation could not run. Nothing was "
                    f"counted; try again in {RETRY_AFTER_WORKER_DIED_SECONDS} s.",
                    retry_after_seconds=RETRY_AFTER_WORKER_DIED_SECONDS,
                ),
            )
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


async def simulate(
    design: Design, scenario: Scenario, seed: int, client: str = ANONYMOUS
) -> SimulationResult:
    """Simulate in this process's pool for ``client`` without blocking the event loop; see
    :meth:`SimulationPool.simulate` for the bounds and the errors raised."""
    return await pool().simulate_async(design, scenario, seed, client)
