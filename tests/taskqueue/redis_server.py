"""A Redis server of the test's own (Debian's redis-server) on a free loopback port, in a folder of
its own with an append-only file, that a test may stop and start again on the same port and data.

Tests that need it are skipped unless ``REDIS_URL_TEST`` is set (``.ci/run`` starts a server with
scripts/ci-redis.sh, which also installs redis-server): each test runs its own server, so tests
in parallel never share a queue and a test may restart its broker.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import redis

from tests.live_server import free_port

REDIS_ENV = "REDIS_URL_TEST"


def redis_server_binary() -> str:
    """redis-server's path; skips the test when REDIS_URL_TEST is unset, fails when it is set but
    the server is not installed (CI must have it)."""
    if not os.environ.get(REDIS_ENV):
        pytest.skip(f"{REDIS_ENV} is not set (scripts/ci-redis.sh start)")
    found = shutil.which("redis-server") or "/usr/bin/redis-server"
    assert Path(found).exists(), "REDIS_URL_TEST is set but redis-server is not installed"
    return found


class RedisServer:
    """``redis-server`` in ``folder`` on 127.0.0.1; :attr:`url` holds the password."""

    def __init__(self, folder: Path):
        self.binary = redis_server_binary()
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.password = secrets.token_hex(12)
        self.url = f"redis://:{self.password}@127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None
        (folder / "redis.conf").write_text(
            f"bind 127.0.0.1\nport {self.port}\nrequirepass {self.password}\n"
            f"dir {folder}\nappendonly yes\nappendfsync always\nsave ''\n"
        )

    def start(self, timeout_s: float = 30) -> RedisServer:
        """Start (again, on the same port and data) and wait until it answers PING."""
        log = (self.folder / "redis.log").open("ab")
        self.process = subprocess.Popen(
            [self.binary, str(self.folder / "redis.conf")], stdout=log, stderr=log
        )
        client = redis.Redis.from_url(self.url, socket_timeout=1)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                if client.ping():
                    client.close()
                    return self
            except redis.RedisError:
                time.sleep(0.05)
        raise RuntimeError(f"redis-server did not start: {(self.folder / 'redis.log').read_text()}")

    def stop(self) -> None:
        """SIGTERM (Redis writes its append-only file and exits) and wait."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)

    def restart(self) -> None:
        """Stop, then start on the same port with the same data."""
        self.stop()
        self.start()
