"""The real server for browser tests: ``designlab serve`` on a free port with its own SQLite
file, and Debian's Chromium with the flags a container needs."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
DESIGNLAB = Path(sys.executable).with_name("designlab")


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_env(database: Path) -> dict[str, str]:
    """The environment of a test server (and of the CLI run beside it)."""
    return {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{database}",
        "ENV": "test",
        "SECRET_KEY": "browser-test-secret-not-for-production",
        "STEPS_DIR": str(REPO / "steps"),
    }


def wait_healthy(url: str, process: subprocess.Popen[bytes], timeout_s: float = 30) -> None:
    """Return once ``url``/healthz answers 200; raise if the server exits or stays silent."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"{url}/healthz did not answer within {timeout_s} s")


@contextmanager
def running_server(workdir: Path) -> Iterator[str]:
    """Serve the repository's course from a fresh database in ``workdir``; yield the base URL."""
    port = free_port()
    log = (workdir / "server.log").open("wb")
    process = subprocess.Popen(
        [str(DESIGNLAB), "serve", "--host", "127.0.0.1", "--port", str(port)],
        cwd=REPO,
        env=server_env(workdir / "designlab.sqlite3"),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=15)
        log.close()
