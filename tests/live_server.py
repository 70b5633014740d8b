"""A real designlab server for tests: uvicorn in a subprocess on a free loopback port.

Used where the test needs the process itself: killing it mid-request (tests/crash), or running two
of them on one database (tests/postgres).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class LiveServer:
    """``uvicorn app.main:create_app --factory`` with ``env`` added to this process's environment
    (``factory`` names another app factory, e.g. one a test wraps).

    ``url`` is its base URL once :meth:`start` returned; stderr (the JSON log) goes to ``log_path``.
    """

    def __init__(self, env: dict[str, str], log_path: Path, factory: str = "app.main:create_app"):
        self.env = {
            **os.environ,
            "ENV": "test",
            "SECRET_KEY": "live-server-secret-key-for-tests",
            "STEPS_DIR": str(REPO / "steps"),
            "SIM_WORKERS": "1",
            **env,
        }
        self.log_path = log_path
        self.factory = factory
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout_s: float = 60) -> LiveServer:
        """Start the server and wait until /healthz answers 200; raises RuntimeError if not."""
        command = [
            sys.executable, "-m", "uvicorn", self.factory, "--factory",
            "--host", "127.0.0.1", "--port", str(self.port),
        ]  # fmt: skip
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(command, cwd=REPO, env=self.env, stderr=log, stdout=log)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited: {self.log_path.read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"server did not start: {self.log_path.read_text()[-2000:]}")

    def log_tail(self, chars: int = 4000) -> str:
        """The last ``chars`` characters of the server's log, for a failing assertion's message."""
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError as exc:
            return f"(log unreadable: {exc})"

    def kill(self) -> None:
        """SIGKILL: no shutdown, no cleanup, requests in flight are cut."""
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        """SIGTERM and wait (SIGKILL after 15 s)."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.kill()
