"""The task queue seen by an operator: does Redis answer, how many jobs wait, how many workers
answer and how many jobs they run (for /healthz and /metrics).

The workers are asked with Celery's remote control (``inspect().active()``: each worker's main
process answers, even while its processes simulate); the queue depth is the length of the Redis
list the jobs wait in. One reading is reused for ``CACHE_SECONDS`` so that frequent scrapes and
health checks do not each broadcast to every worker.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import redis
from celery import Celery

from app.metrics import SystemState
from app.taskqueue.queue_app import QUEUE

INSPECT_TIMEOUT_SECONDS = 1.0
"""How long the workers have to answer the remote-control broadcast."""

CACHE_SECONDS = 2.0


@dataclass(frozen=True)
class QueueStatus:
    """One reading: ``broker`` is ``ok`` or ``error`` (``error`` then says why); ``workers`` the
    Celery host names that answered; ``running`` jobs being run; ``queued`` jobs waiting."""

    broker: str
    workers: tuple[str, ...] = ()
    running: int = 0
    queued: int = 0
    error: str = ""

    def as_state(self) -> SystemState:
        """The /metrics gauges of this reading."""
        return SystemState(
            queue_depth=self.queued,
            jobs_running=self.running,
            workers=len(self.workers),
            broker_up=self.broker == "ok",
        )

    def as_health(self) -> dict[str, object]:
        """The /healthz section of this reading."""
        body: dict[str, object] = {
            "status": "ok" if self.broker == "ok" and self.workers else "error",
            "broker": self.broker,
            "workers": len(self.workers),
            "worker_names": list(self.workers),
            "jobs_running": self.running,
            "queue_depth": self.queued,
        }
        if self.error:
            body["error"] = self.error
        return body


class QueueWatcher:
    """Reads :class:`QueueStatus` for the Celery application ``celery`` on Redis ``redis_url``."""

    def __init__(self, celery: Celery, redis_url: str):
        self.celery = celery
        self.redis = redis.Redis.from_url(redis_url, socket_timeout=2, socket_connect_timeout=2)
        self._lock = threading.Lock()
        self._last: tuple[float, QueueStatus] | None = None

    def read(self) -> QueueStatus:
        """The latest reading (at most CACHE_SECONDS old); never raises."""
        with self._lock:
            if self._last is not None and time.monotonic() - self._last[0] < CACHE_SECONDS:
                return self._last[1]
            status = self._read_now()
            self._last = (time.monotonic(), status)
            return status

    def _read_now(self) -> QueueStatus:
        try:
            self.redis.ping()
            queued = int(self.redis.llen(QUEUE))
        except redis.RedisError as exc:
            return QueueStatus(broker="error", error=f"Redis: {exc}")
        try:
            active = self.celery.control.inspect(timeout=INSPECT_TIMEOUT_SECONDS).active() or {}
        except Exception as exc:  # the broadcast failing is a broker problem
            return QueueStatus(broker="error", queued=queued, error=f"workers: {exc}")
        running = sum(len(jobs or []) for jobs in active.values())
        return QueueStatus("ok", tuple(sorted(active)), running, queued)

    def close(self) -> None:
        """Close the Redis connection."""
        self.redis.close()
