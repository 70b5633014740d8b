"""The compose file's scale-out: web instances and workers on one Redis and one PostgreSQL, with
the proxy waiting longer than a queued simulation may take and /metrics kept off the proxy."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from app.settings import Settings

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
COMPOSE = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
NGINX = (DEPLOY / "nginx.conf").read_text()
SERVICES = COMPOSE["services"]


def test_workers_and_web_instances_share_one_redis_and_one_database():
    app, worker = SERVICES["app"]["environment"], SERVICES["worker"]["environment"]
    assert SERVICES["worker"]["command"] == ["designlab", "worker"]
    assert SERVICES["worker"]["deploy"]["replicas"] >= 2
    assert app["REDIS_URL"] == worker["REDIS_URL"]
    assert app["REDIS_URL"].startswith("redis://:${REDIS_PASSWORD}@redis:6379/")
    assert app["DATABASE_URL"] == worker["DATABASE_URL"]
    for name in ("app", "worker"):
        assert SERVICES[name]["depends_on"]["redis"]["condition"] == "service_healthy"


def test_redis_keeps_queued_jobs_on_disk_and_needs_a_password():
    command = " ".join(SERVICES["redis"]["command"])
    assert "--appendonly yes" in command
    assert "${REDIS_PASSWORD:?" in command
    assert SERVICES["redis"]["networks"] == ["internal"]
    assert not SERVICES["redis"].get("ports")


def test_the_proxy_outwaits_a_queued_simulation_and_hides_the_metrics():
    read = int(re.search(r"proxy_read_timeout (\d+)s;", NGINX).group(1))  # type: ignore[union-attr]
    wait = SERVICES["app"]["environment"]["TASK_WAIT_SECONDS"]
    default_wait = int(re.fullmatch(r"\$\{TASK_WAIT_SECONDS:-(\d+)\}", wait).group(1))  # type: ignore[union-attr]
    assert read > default_wait >= Settings(_env_file=None).sim_timeout_seconds
    assert re.search(r"location = /metrics \{\s*return 404;", NGINX)


def test_a_worker_stops_warmly_within_a_simulation_and_its_hard_limit():
    grace = int(SERVICES["worker"]["stop_grace_period"].removesuffix("s"))
    assert grace > Settings(_env_file=None).sim_timeout_seconds + 5
