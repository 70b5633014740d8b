"""N designlab web instances and M ``designlab worker`` processes on one PostgreSQL database and
one Redis server, as deploy/compose.yaml runs them, for tests that need real processes.

Workers run in their own process group (the Celery main process and its simulation process), so
:meth:`Worker.kill` SIGKILLs both at once, as a machine that dies would. Every job waits at a gate
(app.taskqueue.jobs.TEST_GATE_ENV) until the test opens it, so a test decides how long a job is
in flight instead of hoping it still is.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from app.taskqueue.jobs import TEST_GATE_ENV
from tests.live_server import REPO, LiveServer

DESIGNLAB = str(Path(sys.executable).with_name("designlab"))


def wait_for(condition: Callable[[], Any], what: str, timeout_s: float = 120) -> Any:
    """Poll ``condition`` every 50 ms until it returns something truthy (returned); raises
    AssertionError naming ``what`` after ``timeout_s`` (generous: the machine may be loaded)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout_s:g} s waiting for {what}")


class Gate:
    """The folder the jobs wait in: ``started.<worker>.<job id>`` files, and ``open``."""

    def __init__(self, folder: Path):
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)

    def open(self) -> None:
        """Let every job (held or to come) run."""
        (self.folder / "open").write_text("")

    def started(self) -> list[tuple[str, str]]:
        """(worker, job id) of every job that reached the gate, oldest first."""
        files = sorted(self.folder.glob("started.*"), key=lambda p: p.stat().st_mtime)
        found = []
        for path in files:
            worker, _, job_id = path.name.removeprefix("started.").rpartition(".")
            found.append((worker, job_id))
        return found


class Worker:
    """``designlab worker --name NAME --concurrency 1`` with ``env``; its log in ``log_path``."""

    def __init__(self, name: str, env: dict[str, str], log_path: Path):
        self.name = name
        self.celery_name = f"celery@{name}"
        self.env = env
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> Worker:
        """Start it (it is ready once the web's /healthz counts it: see Cluster.start)."""
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [DESIGNLAB, "worker", "--name", self.name, "--concurrency", "1"],
            cwd=REPO, env=self.env, stdout=log, stderr=log, start_new_session=True,
        )  # fmt: skip
        return self

    def kill(self) -> None:
        """SIGKILL the worker and its simulation process together: no goodbye, no ack."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)

    def stop(self) -> None:
        """SIGTERM the group (a warm shutdown), SIGKILL after 20 s."""
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.kill()

    def jobs_done(self) -> list[dict[str, Any]]:
        """The "simulation job done" log records this worker wrote."""
        records = []
        for line in self.log_path.read_text(errors="replace").splitlines():
            if line.startswith("{") and '"simulation job done"' in line:
                records.append(json.loads(line))
        return records


class Cluster:
    """Web instances and workers sharing ``database_url`` and ``redis_url``."""

    def __init__(
        self, folder: Path, database_url: str, redis_url: str, *, webs: int = 2, workers: int = 2,
        env: dict[str, str] | None = None,
    ):  # fmt: skip
        self.gate = Gate(folder / "gate")
        self.env = {
            **os.environ,
            "ENV": "test",
            "SECRET_KEY": "live-server-secret-key-for-tests",
            "STEPS_DIR": str(REPO / "steps"),
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_url,
            "SIM_WORKERS": "1",
            "SIM_TIMEOUT_SECONDS": "10",
            "TASK_WAIT_SECONDS": "150",
            "LOG_LEVEL": "INFO",
            TEST_GATE_ENV: str(self.gate.folder),
            **(env or {}),
        }
        self.webs = [LiveServer(self.env, folder / f"web-{i + 1}.log") for i in range(webs)]
        self.workers = [
            Worker(f"w{i + 1}", self.env, folder / f"worker-{i + 1}.log") for i in range(workers)
        ]

    def start(self) -> Cluster:
        """Start the web instances one after the other (each migrates), then the workers, and
        wait until the first web instance's /healthz counts every worker."""
        for web in self.webs:
            web.start(timeout_s=120)
        for worker in self.workers:
            worker.start()
        wait_for(lambda: self.workers_seen() == len(self.workers), "every worker to answer")
        return self

    def health(self, web: int = 0) -> dict[str, Any]:
        """/healthz of web instance ``web`` (0-based)."""
        body: dict[str, Any] = httpx.get(self.webs[web].url + "/healthz", timeout=30).json()
        return body

    def workers_seen(self) -> int:
        """Workers answering, as web instance 1's /healthz reports them."""
        return int(self.health()["task_queue"]["workers"])

    def metric(self, name: str, web: int = 0) -> float:
        """The value of the sample ``name`` (labels included, as printed) at /metrics of ``web``;
        0.0 when absent."""
        text = httpx.get(self.webs[web].url + "/metrics", timeout=30).text
        for line in text.splitlines():
            if line.startswith(name + " "):
                return float(line.split()[-1])
        return 0.0

    def stop(self) -> None:
        """Stop everything (workers first, so none waits for a web instance)."""
        self.gate.open()
        for worker in self.workers:
            worker.stop()
        for web in self.webs:
            web.stop()

    def logs(self) -> str:
        """The tail of every log, for a failing assertion's message."""
        parts = [f"--- {w.log_path.name}\n{w.log_path.read_text(errors='replace')[-3000:]}"
                 for w in self.workers]  # fmt: skip
        parts += [f"--- {web.log_path.name}\n{web.log_tail(3000)}" for web in self.webs]
        return "\n".join(parts)
