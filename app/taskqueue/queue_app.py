"""The Celery application shared by the web instances (which enqueue) and the workers (which run).

Why these settings (docs/scale-out.md has the whole argument):

- ``task_acks_late`` with ``worker_prefetch_multiplier = 1``: a job is acknowledged only after it
  ran, and a worker holds no more jobs than it has processes. A worker killed mid-job never
  acknowledged it, so Redis hands it to another worker once the **visibility timeout** has passed
  (kombu's Redis transport keeps unacknowledged jobs in a hash and restores those older than the
  timeout; ``unacked_restore_interval`` sets how often every worker looks). The timeout must
  exceed the longest run (the hard time limit), or a slow job would be handed out twice.
- ``task_reject_on_worker_lost``: a worker *process* that dies (killed for memory) puts its job
  back at once instead of failing it; ``app.taskqueue.jobs`` bounds how often one job may come
  back (``MAX_DELIVERIES``), so a job that kills every worker ends as failed.
- ``task_soft_time_limit`` = SIM_TIMEOUT_SECONDS (the job stops and answers "over budget"),
  ``task_time_limit`` a few seconds later (the process is killed and replaced).
- JSON only, both ways: no pickles cross machines.
- Publishing retries for up to ~15 s (a broker restart), then fails the request (never stuck).
"""

from __future__ import annotations

import os
from typing import Any

from celery import Celery

from app.settings import Settings

SIMULATE_TASK = "designlab.simulate"
"""The registered name of the simulation job (app.taskqueue.jobs.simulate_job)."""

QUEUE = "designlab.simulations"
"""The Redis list the jobs wait in (its length is the queue depth)."""

HARD_LIMIT_GRACE_SECONDS = 5.0
"""The hard time limit is the soft one (SIM_TIMEOUT_SECONDS) plus this: time to answer cleanly."""

VISIBILITY_MARGIN_SECONDS = 30.0
"""The default visibility timeout is SIM_TIMEOUT_SECONDS plus this."""

celery = Celery("designlab", set_as_current=False)
"""The one Celery application of this process; :func:`configure` points it at REDIS_URL."""


def visibility_timeout_seconds(settings: Settings) -> float:
    """TASK_VISIBILITY_TIMEOUT_SECONDS, or SIM_TIMEOUT_SECONDS + 30 s when it is 0; never less
    than the hard time limit plus one second (a longer run would be handed out twice)."""
    hard = settings.sim_timeout_seconds + HARD_LIMIT_GRACE_SECONDS
    wanted = settings.task_visibility_timeout_seconds or (
        settings.sim_timeout_seconds + VISIBILITY_MARGIN_SECONDS
    )
    return max(wanted, hard + 1.0)


def celery_config(settings: Settings) -> dict[str, Any]:
    """The Celery settings for ``settings`` (REDIS_URL must be set); raises ValueError if not."""
    if not settings.redis_url:
        raise ValueError("REDIS_URL is not set: the task queue needs a Redis server")
    visibility = visibility_timeout_seconds(settings)
    redis_options = {
        "socket_timeout": 10,
        "socket_connect_timeout": 5,
        "health_check_interval": 10,
        "retry_on_timeout": True,
    }
    return {
        "broker_url": settings.redis_url,
        "result_backend": settings.redis_url,
        "task_default_queue": QUEUE,
        "task_serializer": "json",
        "result_serializer": "json",
        "accept_content": ["json"],
        "result_accept_content": ["json"],
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        "task_soft_time_limit": settings.sim_timeout_seconds,
        "task_time_limit": settings.sim_timeout_seconds + HARD_LIMIT_GRACE_SECONDS,
        "task_track_started": True,
        "result_expires": max(3600, int(settings.task_wait_seconds * 2)),
        "result_extended": False,
        "broker_transport_options": {
            "visibility_timeout": visibility,
            "unacked_restore_interval": max(1, int(visibility / 6)),
            "unacked_restore_throttle": 1,
            **redis_options,
        },
        "result_backend_transport_options": redis_options,
        "redis_socket_timeout": 10,
        "redis_socket_connect_timeout": 5,
        "redis_retry_on_timeout": True,
        "result_backend_always_retry": True,
        "result_backend_max_retries": 30,
        "result_backend_max_sleep_between_retries_ms": 2000,
        "broker_connection_retry_on_startup": True,
        "broker_connection_max_retries": None,
        "task_publish_retry": True,
        "task_publish_retry_policy": {
            "max_retries": 10,
            "interval_start": 0.2,
            "interval_step": 0.5,
            "interval_max": 2.0,
        },
        "worker_hijack_root_logger": False,
        "worker_redirect_stdouts": False,
        "worker_send_task_events": False,
        "worker_max_tasks_per_child": 500,
        "worker_cancel_long_running_tasks_on_connection_loss": False,
        "broker_channel_error_retry": True,
    }


def configure(settings: Settings) -> Celery:
    """Point this process's Celery application at ``settings.redis_url`` and return it."""
    celery.conf.update(celery_config(settings))
    return celery


def default_concurrency(settings: Settings) -> int:
    """Worker processes for ``designlab worker``: SIM_WORKERS, else one per CPU core."""
    return settings.sim_workers or max(1, os.cpu_count() or 1)
