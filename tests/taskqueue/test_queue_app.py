"""The task queue's Celery settings: late acknowledgement, time limits, visibility timeout."""

from __future__ import annotations

import pytest

from app.settings import Settings
from app.taskqueue.queue_app import (
    HARD_LIMIT_GRACE_SECONDS,
    celery_config,
    visibility_timeout_seconds,
)

REDIS = "redis://127.0.0.1:6379/0"


def settings(**values: object) -> Settings:
    return Settings(_env_file=None, redis_url=REDIS, **values)  # type: ignore[arg-type]


def test_jobs_are_acknowledged_after_they_ran_and_put_back_when_their_worker_dies():
    config = celery_config(settings())
    assert config["task_acks_late"] is True
    assert config["task_reject_on_worker_lost"] is True
    assert config["worker_prefetch_multiplier"] == 1, "a worker holds only the jobs it runs"
    assert config["accept_content"] == ["json"] and config["result_accept_content"] == ["json"]


def test_the_time_limits_are_the_simulation_budget_then_a_kill():
    config = celery_config(settings(sim_timeout_seconds=12))
    assert config["task_soft_time_limit"] == 12
    assert config["task_time_limit"] == 12 + HARD_LIMIT_GRACE_SECONDS


@pytest.mark.parametrize("asked", [0.0, 1.0, 500.0])
def test_the_visibility_timeout_outlasts_the_hard_time_limit(asked):
    chosen = settings(sim_timeout_seconds=30, task_visibility_timeout_seconds=asked)
    timeout = visibility_timeout_seconds(chosen)
    assert timeout > 30 + HARD_LIMIT_GRACE_SECONDS, "a slow job would be handed out twice"
    assert timeout == (max(asked, 36.0) if asked else 60.0)
    options = celery_config(chosen)["broker_transport_options"]
    assert options["visibility_timeout"] == timeout
    assert options["unacked_restore_interval"] <= timeout / 6 + 1


def test_the_task_queue_needs_a_redis_url():
    with pytest.raises(ValueError, match="REDIS_URL"):
        celery_config(Settings(_env_file=None))
