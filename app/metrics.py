"""What an operator watches, in Prometheus's text format at ``/metrics`` (``prometheus_client``).

Per instance (counters and histograms of this process; Prometheus sums the instances):

- ``designlab_simulation_jobs_submitted_total``: simulations this instance sent to be run;
- ``designlab_simulation_job_seconds{outcome}``: from sending a simulation to its answer, queue
  wait included (outcome ``ok``, ``refused``, ``bad_input`` or ``failed``);
- ``designlab_simulation_run_seconds``: the simulation alone, in the worker (task queue only);
- ``designlab_simulation_jobs_waiting``: this instance's requests waiting for a simulation now;
- ``designlab_result_cache_lookups_total{result}`` (``hit``/``miss``) and
  ``designlab_result_cache_hit_ratio`` (hits / lookups since this process started).

The whole system's state, read at each scrape (``app.taskqueue.status`` with REDIS_URL, else this
instance's own pool): ``designlab_queue_depth`` (jobs waiting for a worker),
``designlab_jobs_running``, ``designlab_workers`` and ``designlab_broker_up`` (1 when Redis
answers, absent without a broker).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from fastapi import APIRouter, Request
from fastapi.responses import Response
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from app.errors import BadInput
from app.simpool import SimulationRefused

REGISTRY = CollectorRegistry(auto_describe=True)
"""designlab's own registry (not the library's global one: tests build many apps per process)."""

JOB_BUCKETS_SECONDS = (0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120)

JOBS_SUBMITTED = Counter(
    "designlab_simulation_jobs_submitted",
    "Simulations this instance sent to be run (cache misses).",
    registry=REGISTRY,
)
JOB_SECONDS = Histogram(
    "designlab_simulation_job_seconds",
    "Seconds from sending a simulation to its answer, time queued included.",
    ["outcome"],
    buckets=JOB_BUCKETS_SECONDS,
    registry=REGISTRY,
)
RUN_SECONDS = Histogram(
    "designlab_simulation_run_seconds",
    "Seconds a worker spent simulating (task queue only; cache answers not counted).",
    buckets=JOB_BUCKETS_SECONDS,
    registry=REGISTRY,
)
JOBS_WAITING = Gauge(
    "designlab_simulation_jobs_waiting",
    "This instance's requests waiting for a simulation now.",
    registry=REGISTRY,
)
CACHE_LOOKUPS = Counter(
    "designlab_result_cache_lookups",
    "Result-cache lookups by outcome (hit: the simulation was not run again).",
    ["result"],
    registry=REGISTRY,
)


_lookups = {"hit": 0, "miss": 0}
_lookups_lock = threading.Lock()


def count_cache_lookups(hits: int, misses: int) -> None:
    """Add ``hits`` and ``misses`` (numbers of keys) to the result-cache counters."""
    with _lookups_lock:
        _lookups["hit"] += hits
        _lookups["miss"] += misses
    if hits:
        CACHE_LOOKUPS.labels("hit").inc(hits)
    if misses:
        CACHE_LOOKUPS.labels("miss").inc(misses)


def outcome_label(exc: BaseException | None) -> str:
    """The ``outcome`` label of a simulation that raised ``exc`` (None: it succeeded)."""
    if exc is None:
        return "ok"
    if isinstance(exc, SimulationRefused):
        return "refused"
    if isinstance(exc, BadInput):
        return "bad_input"
    return "failed"


def cache_hit_ratio() -> float:
    """Result-cache hits / lookups since this process started (0 before any lookup)."""
    with _lookups_lock:
        total = _lookups["hit"] + _lookups["miss"]
        return _lookups["hit"] / total if total else 0.0


@dataclass(frozen=True)
class SystemState:
    """The simulation system seen from here: jobs waiting for a worker and running, workers, and
    whether the broker answered (None: no broker, the embedded pool)."""

    queue_depth: int
    jobs_running: int
    workers: int
    broker_up: bool | None = None


class SystemCollector(Collector):
    """Reads :class:`SystemState` from ``read`` at each scrape, plus the cache hit ratio."""

    def __init__(self, read: Callable[[], SystemState]):
        self.read = read

    def collect(self) -> Iterator[GaugeMetricFamily]:
        """The gauges of one scrape."""
        state = self.read()
        yield GaugeMetricFamily(
            "designlab_queue_depth", "Simulation jobs waiting for a worker.", state.queue_depth
        )
        yield GaugeMetricFamily(
            "designlab_jobs_running", "Simulation jobs being run now.", state.jobs_running
        )
        yield GaugeMetricFamily(
            "designlab_workers", "Simulation worker processes answering.", state.workers
        )
        if state.broker_up is not None:
            yield GaugeMetricFamily(
                "designlab_broker_up", "1 when the task queue's Redis answers.", state.broker_up
            )
        yield GaugeMetricFamily(
            "designlab_result_cache_hit_ratio",
            "Result-cache hits / lookups since this process started.",
            cache_hit_ratio(),
        )


_system: SystemCollector | None = None


def watch_system(read: Callable[[], SystemState]) -> None:
    """Report the system state that ``read`` returns at each scrape (replaces an earlier one)."""
    global _system
    if _system is not None:
        REGISTRY.unregister(_system)
    _system = SystemCollector(read)
    REGISTRY.register(_system)


router = APIRouter()


@router.get("/metrics", name="metrics", include_in_schema=False)
def metrics(request: Request) -> Response:
    """Every metric above in Prometheus's text exposition format."""
    return Response(generate_latest(REGISTRY), media_type=CONTENT_TYPE_LATEST)
