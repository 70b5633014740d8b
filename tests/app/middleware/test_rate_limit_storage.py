"""Where rate limits are counted: in Redis with REDIS_URL, shared by every instance (a Redis server
of the test's own; skipped unless REDIS_URL_TEST is set), else in each process's memory."""

from __future__ import annotations

from pathlib import Path

from tests.taskqueue.redis_server import RedisServer

DESIGN_YAML = {"content": b"version: 1\n", "headers": {"content-type": "application/yaml"}}
NO_SUCH = "/api/v1/simulate?scenario=no-such"


def test_two_instances_on_one_redis_share_one_budget(make_client, tmp_path: Path):
    server = RedisServer(tmp_path / "redis").start()
    try:
        a = make_client(rate_limit_simulate="3/minute", redis_url=server.url)
        b = make_client(rate_limit_simulate="3/minute", redis_url=server.url)
        statuses = [c.post(NO_SUCH, **DESIGN_YAML).status_code for c in (a, b, a, b)]
    finally:
        server.stop()
    assert statuses == [404, 404, 404, 429]


def test_without_redis_each_instance_counts_on_its_own(make_client):
    a = make_client(rate_limit_simulate="2/minute")
    b = make_client(rate_limit_simulate="2/minute")
    statuses = [c.post(NO_SUCH, **DESIGN_YAML).status_code for c in (a, b, a, b)]
    assert statuses == [404, 404, 404, 404]
