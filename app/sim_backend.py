"""Where this app's simulations run: the embedded process pool, or the task queue (REDIS_URL).

``backend_for(settings)`` gives app/simpool.py's ``configure`` the pool class to use; both
report to /metrics (app/metrics.py). ``health_of`` and ``state_of`` describe the chosen backend
for /healthz and /metrics.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from app import metrics
from app.settings import Settings
from app.simpool import PoolLimits, SimulationPool
from simulator.design import Design
from simulator.result import SimulationResult
from simulator.scenario import Scenario

if TYPE_CHECKING:
    from app.taskqueue.status import QueueWatcher


class MeasuredPool(SimulationPool):
    """The embedded pool (app/simpool.py), counting its jobs for /metrics: the ones in flight
    beyond ``limits.workers`` are waiting in its queue (it runs them first come, first served)."""

    def __init__(self, limits: PoolLimits):
        super().__init__(limits)
        self._in_flight = 0
        self._count_lock = threading.Lock()

    def _enter(self) -> float:
        with self._count_lock:
            self._in_flight += 1
        metrics.JOBS_SUBMITTED.inc()
        metrics.JOBS_WAITING.inc()
        return time.monotonic()

    def _leave(self, started: float, outcome: str) -> None:
        with self._count_lock:
            self._in_flight -= 1
        metrics.JOBS_WAITING.dec()
        metrics.JOB_SECONDS.labels(outcome).observe(time.monotonic() - started)

    def state(self) -> metrics.SystemState:
        """Jobs waiting and running in this pool now, and its worker processes."""
        with self._count_lock:
            in_flight = self._in_flight
        workers = self.limits.workers
        return metrics.SystemState(
            queue_depth=max(0, in_flight - workers),
            jobs_running=min(in_flight, workers),
            workers=workers,
        )

    def simulate(self, design: Design, scenario: Scenario, seed: int, *args: Any, **kwargs: Any
                 ) -> SimulationResult:  # fmt: skip
        """:meth:`SimulationPool.simulate`, counted."""
        started = self._enter()
        try:
            result = super().simulate(design, scenario, seed, *args, **kwargs)
        except Exception as exc:
            self._leave(started, metrics.outcome_label(exc))
            raise
        self._leave(started, "ok")
        return result

    async def simulate_async(
        self, design: Design, scenario: Scenario, seed: int, *args: Any, **kwargs: Any
    ) -> SimulationResult:
        """:meth:`SimulationPool.simulate_async`, counted."""
        started = self._enter()
        try:
            result = await super().simulate_async(design, scenario, seed, *args, **kwargs)
        except Exception as exc:
            self._leave(started, metrics.outcome_label(exc))
            raise
        self._leave(started, "ok")
        return result


def backend_for(settings: Settings) -> Callable[[PoolLimits], SimulationPool]:
    """The pool class for ``settings``: the task queue when REDIS_URL is set, else the embedded
    pool (both measured)."""
    if not settings.redis_url:
        return MeasuredPool
    from app.taskqueue.client import QueuedSimulations

    return lambda limits: QueuedSimulations(limits, settings)


def watch(settings: Settings, pool: SimulationPool) -> QueueWatcher | None:
    """Report ``pool``'s state at /metrics; with REDIS_URL, the task queue's (also returned, for
    /healthz), else the embedded pool's."""
    if not settings.redis_url:
        if isinstance(pool, MeasuredPool):
            metrics.watch_system(pool.state)
        return None
    from app.taskqueue.queue_app import configure
    from app.taskqueue.status import QueueWatcher

    watcher = QueueWatcher(configure(settings), settings.redis_url)
    metrics.watch_system(lambda: watcher.read().as_state())
    return watcher
