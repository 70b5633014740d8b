"""Load: 50 learners on one designlab instance over loopback for 60 s, browsing and running
simulations; prints p50/p95/max per kind of request and the errors. Target (issue 9): page p95
<= 300 ms with no errors.

    .venv/bin/python benchmarks/load.py [--learners 50] [--seconds 60] [--url URL]
    .venv/bin/python benchmarks/load.py --learners 200 --workers 2

With ``--workers M`` it runs two sittings one after the other, each on a new database: the
embedded pool (one web instance), then the task queue (one web instance with REDIS_URL and M
``designlab worker`` processes of one simulation process each), starting a Redis server of its
own (Debian's redis-server, 127.0.0.1 only, a temporary folder, stopped at the end); then it
prints run and report-card p50/p95 and throughput of both side by side.

Without ``--url`` it starts ``uvicorn app.main:create_app --factory`` on a free port of
127.0.0.1 (``ENV=test``: production behaviour but for Secure cookies, which plain HTTP drops; a
new SQLite file unless ``--database-url``; the simulation pool at its default, CPU cores less
one) and stops it at the end. Only 127.0.0.1 is ever contacted.

Each learner is a browser with its own session (cookies, CSRF token): it opens the overview,
then goes through the steps in order. On each step it reads the page, saves one changed decision
(``POST /steps/{slug}`` as htmx does), runs the step (``POST /steps/{slug}/run``: the step's
scenarios are simulated for its own design, then graded) and goes on; after one step in ten it
opens the report card. Between requests it thinks for a uniform 1-4 s (the course's pace is
about four minutes a step, so this is a class working at several times its real speed).
Learners start over the first 5 s. Every response is checked: an error is a transport error or
any status other than 200/303, or a run whose results hold a check that could not run (its
simulation refused or failed). A save answered 422 (the moved value breaks a rule between
fields, such as replicas above brokers) is the form doing its job: counted as refused, apart.

Kinds: ``page`` (overview and step pages), ``save``, ``run`` (the step's simulations and its
grading), ``report`` (the report card: every step graded, simulating what is not cached for the
learner's design) and ``static``. A request still running at the deadline is awaited
and counted.

Measured on the 2-core development machine (shared with other work), 50 learners, 60 s,
p95 in ms (runs and reports: seconds), no errors in any run:

    database    SIM_WORKERS   page   save   run p50   run p95   report p95
    SQLite      1 (default)    123    161    0.17 s    22 s      46 s
    SQLite      2              233    312    0.18 s    7.9 s     22 s
    PostgreSQL  1              210    259    0.21 s    29 s      50 s

Pages stay fast because simulations run in the pool's processes; this load asks for about three
times what one worker simulates (each run and report card simulates the learner's new design),
so runs queue. deploy/README.md says how to size for a class.

``--hostile N`` measures something else (issue 16, case 11): one anonymous API client keeps N
``POST /api/v1/simulate?scenario=replay`` requests in flight, each with the reference design but
the agent group's ``max_poll_interval_ms`` set to ``--hostile-poll-ms`` (default 1), while one
signed-up learner runs an ordinary step (``--hostile-step``, each round with a changed decision,
so it is simulated, not cached) ``--hostile-rounds`` times; it prints the learner's run times
(target: each within 2 s; one warm-up run first starts the pool's workers, reported apart) and
what the hostile requests got. The started server's simulation
rate limit is lifted (RATE_LIMIT_SIMULATE), so the pool's own bounds are what is measured, and
``--sim-workers`` sets SIM_WORKERS. Measured on the 2-core development machine (shared), 8
hostile requests in flight, the ``event-log`` step (broker-loss and replay simulated):

    hostile poll   SIM_WORKERS   learner's runs (s)               hostile answers
    1 ms           1 (default)   1.12 0.04 0.05 0.10 0.82   met   422 at once (~700), named field
    1000 ms        2             1.64 0.08 0.06 0.08 1.79   met   one running, the rest queued
    1000 ms        1 (default)   28.6 0.12 0.11         NOT met   1 x 200, 1 x 422, 6 x 503

With ``max_poll_interval_ms: 1`` the size budget refuses the design before any work (about 1.9
billion watchdog looks), so the learner never waits. A hostile design under the budget but slow
(1000 ms: 1.9 million looks, about 23 s) holds one worker at a time: with two workers the
learner gets the other at once; with one, the learner's run goes next but waits for the
running one to end (the simulator-side bound on control events is what would cut it short).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parents[1]
HOSTILE_RUN_TARGET_S = 2.0
"""An ordinary run's wall time while hostile runs are in flight (issue 16, case 11)."""
sys.path[0] = str(ROOT)  # benchmarks/simulator.py must not shadow the simulator package

PAGE_P95_TARGET_MS = 300.0
REPORT_CHANCE = 0.1
"""After each step, the chance a learner opens the report card (it grades every step)."""
OK = {200, 303}


@dataclass
class Figures:
    """Latencies in milliseconds and error descriptions, per kind of request."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    refused: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    """422 answers: a changed value the design rules refuse (the form comes back with the
    message), counted apart from errors."""

    def record(self, kind: str, started: float, outcome: httpx.Response | Exception) -> None:
        self.latencies[kind].append((time.perf_counter() - started) * 1000)
        if isinstance(outcome, Exception):
            self.errors[kind].append(type(outcome).__name__)
        elif outcome.status_code == 422 and kind == "save":
            self.refused[kind] += 1
        elif outcome.status_code not in OK:
            self.errors[kind].append(str(outcome.status_code))

    def summary(self) -> dict[str, dict[str, float | int | dict[str, int]]]:
        out: dict[str, dict[str, float | int | dict[str, int]]] = {}
        for kind in sorted(self.latencies):
            values = sorted(self.latencies[kind])
            errors: dict[str, int] = defaultdict(int)
            for error in self.errors[kind]:
                errors[error] += 1
            out[kind] = {
                "requests": len(values),
                "errors": len(self.errors[kind]),
                "refused_422": self.refused[kind],
                "error_kinds": dict(errors),
                "p50_ms": round(statistics.median(values), 1),
                "p95_ms": round(percentile(values, 95), 1),
                "max_ms": round(values[-1], 1),
            }
        return out


def percentile(sorted_values: list[float], p: float) -> float:
    """The nearest-rank percentile of an ascending list."""
    rank = max(1, int(round(p / 100 * len(sorted_values) + 0.5)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def _whole(step: object) -> bool:
    """True for a number input stepping by whole numbers ("1", "1.0")."""
    try:
        return float(str(step)) == 1.0
    except ValueError:
        return False


def decision_form(html: str) -> tuple[dict[str, str], list[tuple[str, int, int]]]:
    """The step's decision form as a browser would send it, and its number inputs as
    (name, min, max)."""
    form = BeautifulSoup(html, "html.parser").select_one("#decisions form")
    if form is None:
        return {}, []
    values: dict[str, str] = {}
    numbers: list[tuple[str, int, int]] = []
    for control in form.select("input[name]"):
        kind = control.get("type", "text")
        if kind in ("radio", "checkbox") and not control.has_attr("checked"):
            continue
        name = str(control["name"])
        values[name] = str(control.get("value", "on"))
        if kind == "number" and _whole(control.get("step", "1")) and values[name].isdigit():
            low = int(float(str(control.get("min", "0"))))
            high = int(float(str(control.get("max", "10000"))))
            numbers.append((name, low, high))
    for select in form.select("select[name]"):
        chosen = select.select_one("option[selected]") or select.select_one("option")
        if chosen is not None:
            values[str(select["name"])] = str(chosen.get("value", ""))
    return values, numbers


def changed(values: dict[str, str], numbers: list[tuple[str, int, int]], rng: random.Random):
    """``values`` with one whole-number decision moved by about a quarter, within its bounds."""
    if not numbers:
        return values
    name, low, high = rng.choice(numbers)
    current = int(values[name])
    step = max(1, round(current * 0.25))
    moved = min(high, max(low, current + rng.choice((-step, step))))
    return {**values, name: str(moved)}


class Learner:
    """One browser going through the course until the deadline."""

    def __init__(self, number: int, url: str, slugs: list[str], figures: Figures, seed: int):
        self.client = httpx.AsyncClient(base_url=url, timeout=120, follow_redirects=False)
        self.slugs = slugs
        self.figures = figures
        self.rng = random.Random(seed * 1000 + number)
        self.number = number

    async def request(self, kind: str, method: str, path: str, **kwargs) -> httpx.Response | None:
        started = time.perf_counter()
        try:
            response = await self.client.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            self.figures.record(kind, started, exc)
            return None
        self.figures.record(kind, started, response)
        return response

    async def think(self, low: float, high: float, deadline: float) -> bool:
        await asyncio.sleep(self.rng.uniform(low, high))
        return time.monotonic() < deadline

    async def run(self, deadline: float, think: tuple[float, float]) -> None:
        await asyncio.sleep(self.rng.uniform(0, 5))
        htmx = {"HX-Request": "true"}
        try:
            await self.request("page", "GET", "/")
            await self.request("static", "GET", "/static/css/designlab.css")
            for index in range(10_000):
                slug = self.slugs[index % len(self.slugs)]
                if not await self.think(*think, deadline):
                    return
                page = await self.request("page", "GET", f"/steps/{slug}")
                if page is None or page.status_code != 200:
                    continue
                values, numbers = decision_form(page.text)
                if values:
                    if not await self.think(*think, deadline):
                        return
                    sent = changed(values, numbers, self.rng)
                    saved = await self.request(
                        "save", "POST", f"/steps/{slug}", data=sent, headers=htmx
                    )
                    if saved is not None and saved.status_code == 200:
                        values, _ = decision_form(saved.text)
                    if not await self.think(*think, deadline):
                        return
                    ran = await self.request(
                        "run", "POST", f"/steps/{slug}/run", data=values, headers=htmx
                    )
                    if ran is not None and 'class="check check-error"' in ran.text:
                        self.figures.errors["run"].append("check could not run")
                if self.rng.random() < REPORT_CHANCE:
                    if not await self.think(*think, deadline):
                        return
                    await self.request("report", "GET", "/report")
        finally:
            await self.client.aclose()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def server_env(database_url: str | None, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of the started server (and workers): a new SQLite file by default."""
    return {
        **os.environ,
        "ENV": "test",  # production but for Secure cookies, which plain-HTTP loopback drops
        "SECRET_KEY": "load-benchmark-" + os.urandom(16).hex(),
        "DATABASE_URL": database_url or f"sqlite:///{tempfile.mkdtemp()}/load.sqlite3",
        "STEPS_DIR": str(ROOT / "steps"),
        "LOG_LEVEL": os.environ.get("LOG_LEVEL", "WARNING"),
        # Every learner here is a guest on one address, which shares one budget: lift the limits.
        "RATE_LIMIT_SIMULATE": "100000/minute",
        "RATE_LIMIT_GRADE": "100000/minute",
        **(extra or {}),
    }


def start_server(env: dict[str, str], log_path: Path) -> tuple[subprocess.Popen[bytes], str]:
    """uvicorn on a free loopback port; returns the process and its URL once /healthz is 200."""
    port = free_port()
    command = [
        sys.executable, "-m", "uvicorn", "app.main:create_app", "--factory",
        "--host", "127.0.0.1", "--port", str(port), "--no-access-log",
    ]  # fmt: skip
    log = log_path.open("wb")
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        if process.poll() is not None:
            raise SystemExit(f"the server exited: see {log_path}")
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return process, url
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    process.kill()
    raise SystemExit(f"the server did not start: see {log_path}")


class TaskQueue:
    """A Redis server on 127.0.0.1 (temporary folder, random password) and ``workers``
    ``designlab worker`` processes of one simulation process each, all stopped by :meth:`stop`."""

    def __init__(self, workers: int, log_dir: Path):
        self.folder = Path(tempfile.mkdtemp(prefix="designlab-load-redis-"))
        self.log_dir = log_dir
        self.workers = workers
        port = free_port()
        password = os.urandom(12).hex()
        self.url = f"redis://:{password}@127.0.0.1:{port}/0"
        (self.folder / "redis.conf").write_text(
            f"bind 127.0.0.1\nport {port}\nrequirepass {password}\ndir {self.folder}\n"
            "appendonly yes\nappendfsync everysec\nsave ''\n"
        )
        self.redis: subprocess.Popen[bytes] | None = None
        self.processes: list[subprocess.Popen[bytes]] = []

    def start(self, env: dict[str, str]) -> None:
        """Start Redis, then the workers with ``env`` (which must hold this REDIS_URL)."""
        server = shutil.which("redis-server") or "/usr/bin/redis-server"
        if not Path(server).exists():
            raise SystemExit("--workers needs redis-server (apt-get install redis-server)")
        log = (self.log_dir / "redis.log").open("wb")
        self.redis = subprocess.Popen(
            [server, str(self.folder / "redis.conf")], stdout=log, stderr=log
        )
        designlab = str(Path(sys.executable).with_name("designlab"))
        for i in range(self.workers):
            log = (self.log_dir / f"worker-{i + 1}.log").open("wb")
            command = [designlab, "worker", "--concurrency", "1", "--name", f"load-w{i + 1}"]
            self.processes.append(
                subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=log)
            )

    def wait_ready(self, url: str) -> None:
        """Wait until the web instance at ``url`` counts every worker (at most 120 s)."""
        for _ in range(1200):
            body = httpx.get(f"{url}/healthz", timeout=5).json()
            if body.get("task_queue", {}).get("workers") == self.workers:
                return
            time.sleep(0.1)
        raise SystemExit(f"the workers did not start: see {self.log_dir}")

    def stop(self) -> None:
        """Stop the workers (warm shutdown), then Redis; delete Redis's folder."""
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
        if self.redis is not None:
            self.redis.terminate()
            self.redis.wait(timeout=30)
        shutil.rmtree(self.folder, ignore_errors=True)


def course_slugs() -> list[str]:
    from app.course.loader import load_course

    return [step.slug for step in load_course(ROOT / "steps").steps]


async def load(url: str, learners: int, seconds: float, think: tuple[float, float], seed: int):
    figures = Figures()
    slugs = course_slugs()
    deadline = time.monotonic() + seconds
    started = time.perf_counter()
    crowd = [Learner(i, url, slugs, figures, seed) for i in range(learners)]
    await asyncio.gather(*(learner.run(deadline, think) for learner in crowd))
    return figures, time.perf_counter() - started


def sitting(args: argparse.Namespace, log_dir: Path, workers: int) -> tuple[Figures, float]:
    """One sitting on a new server (and, with ``workers``, a new task queue): the load, then
    everything stopped; returns the figures and the wall time."""
    log_dir.mkdir(parents=True, exist_ok=True)
    queue = TaskQueue(workers, log_dir) if workers else None
    env = server_env(args.database_url, {"REDIS_URL": queue.url} if queue else None)
    process = None
    try:
        if queue is not None:
            queue.start(env)
        process, url = start_server(env, log_dir / "server.log")
        if queue is not None:
            queue.wait_ready(url)
        return asyncio.run(
            load(url, args.learners, args.seconds, (args.think_min, args.think_max), args.seed)
        )
    finally:
        if process is not None:
            process.terminate()
            process.wait(timeout=30)
        if queue is not None:
            queue.stop()


def report(label: str, learners: int, figures: Figures, wall: float) -> tuple[bool, int]:
    """Print one sitting's table; returns (page target met, errors)."""
    summary = figures.summary()
    total = sum(int(k["requests"]) for k in summary.values())
    errors = sum(int(k["errors"]) for k in summary.values())
    print(f"{label}: {learners} learners, {wall:.0f} s, {total} requests ({total / wall:.1f}/s)")
    print(
        f"{'kind':<8}{'requests':>10}{'errors':>8}{'422':>6}{'p50 ms':>10}{'p95 ms':>10}"
        f"{'max ms':>10}{'per s':>8}"
    )
    for kind, row in summary.items():
        print(
            f"{kind:<8}{row['requests']:>10}{row['errors']:>8}{row['refused_422']:>6}"
            f"{row['p50_ms']:>10}{row['p95_ms']:>10}{row['max_ms']:>10}"
            f"{int(row['requests']) / wall:>8.2f}"
        )
    page_p95 = float(summary.get("page", {}).get("p95_ms", 0.0))
    print(json.dumps({"set_up": label, "learners": learners, "seconds": round(wall, 1),
                      "kinds": summary}))  # fmt: skip
    met = page_p95 <= PAGE_P95_TARGET_MS and errors == 0
    print(
        f"page p95 {page_p95:.0f} ms (target <= {PAGE_P95_TARGET_MS:.0f}), errors {errors}: "
        + ("met" if met else "NOT met")
    )
    return met, errors


def compare(rows: list[tuple[str, Figures, float]]) -> None:
    """Runs and report cards of every sitting side by side: p50, p95 (s) and completed per s."""
    print(f"{'set-up':<24}{'run p50':>9}{'run p95':>9}{'runs/s':>8}"
          f"{'report p50':>12}{'report p95':>12}{'reports/s':>11}")  # fmt: skip
    for label, figures, wall in rows:
        cells = []
        for kind in ("run", "report"):
            values = sorted(figures.latencies.get(kind) or [0.0])
            cells += [statistics.median(values) / 1000, percentile(values, 95) / 1000]
            cells.append(len(figures.latencies.get(kind) or []) / wall)
        print(f"{label:<24}{cells[0]:>8.2f}s{cells[1]:>8.2f}s{cells[2]:>8.2f}"
              f"{cells[3]:>11.2f}s{cells[4]:>11.2f}s{cells[5]:>11.2f}")  # fmt: skip


def hostile_design(poll_ms: float) -> str:
    """The reference design with the agent group's max_poll_interval_ms set to ``poll_ms``."""
    import yaml

    design = yaml.safe_load((ROOT / "steps" / "designs" / "reference.yaml").read_text())
    design.setdefault("consumers", {}).setdefault("agent", {})["max_poll_interval_ms"] = poll_ms
    design["name"] = f"hostile poll {poll_ms:g} ms"
    return yaml.safe_dump(design, sort_keys=False)


async def sign_up(client: httpx.AsyncClient) -> None:
    """Create an account for the learner (so the pool tells it from the hostile address)."""
    page = await client.get("/signup")
    token = BeautifulSoup(page.text, "html.parser").select_one("input[name='csrf_token']")
    assert token is not None, "the sign-up page has no CSRF token"
    email = f"learner-{os.urandom(4).hex()}@example.com"
    form = {"csrf_token": str(token["value"]), "email": email, "password": "hostile-bench-pw-1"}
    answer = await client.post("/signup", data=form)
    if answer.status_code != 303:
        raise SystemExit(f"sign-up answered {answer.status_code}")


async def hostile(url: str, args: argparse.Namespace) -> dict[str, Any]:
    """The --hostile measurement (see the module docstring); returns its figures."""
    body = hostile_design(args.hostile_poll_ms)
    outcomes: dict[str, int] = defaultdict(int)
    hostile_seconds: list[float] = []
    stop = asyncio.Event()

    async def attacker(client: httpx.AsyncClient) -> None:
        while not stop.is_set():
            started = time.perf_counter()
            try:
                answer = await client.post(
                    "/api/v1/simulate?scenario=replay",
                    content=body,
                    headers={"content-type": "application/yaml"},
                )
                outcomes[str(answer.status_code)] += 1
            except httpx.HTTPError as exc:
                outcomes[type(exc).__name__] += 1
            hostile_seconds.append(time.perf_counter() - started)

    runs: list[float] = []
    statuses: list[int] = []
    save_statuses: list[int] = []
    async with (
        httpx.AsyncClient(base_url=url, timeout=300) as api,
        httpx.AsyncClient(base_url=url, timeout=300, follow_redirects=False) as browser,
    ):
        await sign_up(browser)
        rng = random.Random(args.seed)
        slug = args.hostile_step

        tried: set[tuple[tuple[str, str], ...]] = set()

        async def ordinary_run() -> None:
            page = await browser.get(f"/steps/{slug}")
            values, numbers = decision_form(page.text)
            tried.add(tuple(sorted(values.items())))
            for _ in range(100):  # a design not run before, so the run is simulated
                moved = changed(values, numbers, rng)
                if tuple(sorted(moved.items())) not in tried:
                    break
            tried.add(tuple(sorted(moved.items())))
            saved = await browser.post(f"/steps/{slug}", data=moved, headers={"HX-Request": "true"})
            save_statuses.append(saved.status_code)
            values, _ = decision_form((await browser.get(f"/steps/{slug}")).text)
            started = time.perf_counter()
            ran = await browser.post(
                f"/steps/{slug}/run", data=values, headers={"HX-Request": "true"}
            )
            runs.append(time.perf_counter() - started)
            statuses.append(ran.status_code)

        await ordinary_run()  # warm-up: starts the pool's worker processes; not counted
        warm_up = runs.pop()
        statuses.pop()
        attackers = [asyncio.create_task(attacker(api)) for _ in range(args.hostile)]
        await asyncio.sleep(2.0)  # the hostile requests are in flight (queued or running)
        for _ in range(args.hostile_rounds):
            await ordinary_run()
        stop.set()
        for task in attackers:
            task.cancel()
        await asyncio.gather(*attackers, return_exceptions=True)
    return {
        "hostile_in_flight": args.hostile,
        "hostile_poll_ms": args.hostile_poll_ms,
        "learner_step": args.hostile_step,
        "learner_warm_up_run_s": round(warm_up, 2),
        "learner_run_s": [round(r, 2) for r in runs],
        "learner_run_status": statuses,
        "learner_save_status": save_statuses[1:],
        "learner_run_max_s": round(max(runs), 2),
        "hostile_answers": dict(outcomes),
        "hostile_p50_s": round(statistics.median(hostile_seconds), 2) if hostile_seconds else None,
    }


def main_hostile(args: argparse.Namespace) -> int:
    """``--hostile N``: start a server (unless --url), measure, print, judge."""
    process = None
    log_path = Path(os.environ.get("LOAD_SERVER_LOG") or Path(tempfile.mkdtemp()) / "server.log")
    url = args.url
    if url is None:
        extra = {"RATE_LIMIT_SIMULATE": "100000/minute"}
        if args.sim_workers:
            extra["SIM_WORKERS"] = str(args.sim_workers)
        process, url = start_server(server_env(args.database_url, extra), log_path)
    try:
        figures = asyncio.run(hostile(url, args))
    finally:
        if process is not None:
            process.terminate()  # in-flight hostile runs end within SIM_TIMEOUT_SECONDS
            try:
                process.wait(timeout=90)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=30)
    print(json.dumps(figures))
    worst = max(figures["learner_run_s"])
    ok = worst <= HOSTILE_RUN_TARGET_S and set(figures["learner_run_status"]) == {200}
    print(
        f"learner's run with {args.hostile} hostile requests in flight: max {worst:.2f} s "
        f"(target <= {HOSTILE_RUN_TARGET_S:g} s): " + ("met" if ok else "NOT met")
    )
    return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learners", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--think-min", type=float, default=1.0)
    parser.add_argument("--think-max", type=float, default=4.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--url", help="an already running instance on 127.0.0.1")
    parser.add_argument("--database-url", help="for the started server (default: new SQLite)")
    parser.add_argument(
        "--workers", type=int, default=0,
        help="also run a sitting on the task queue with this many workers (Redis started here)",
    )  # fmt: skip
    parser.add_argument("--hostile", type=int, default=0, help="hostile requests in flight")
    parser.add_argument("--hostile-poll-ms", type=float, default=1.0)
    parser.add_argument("--hostile-rounds", type=int, default=5)
    parser.add_argument("--hostile-step", default="event-log")
    parser.add_argument("--sim-workers", type=int, default=0, help="SIM_WORKERS (0: default)")
    args = parser.parse_args()
    if args.hostile:
        return main_hostile(args)
    if args.url and not args.url.startswith(("http://127.0.0.1", "http://localhost")):
        raise SystemExit("--url must be on 127.0.0.1: this benchmark only loads loopback")
    if args.url and args.workers:
        raise SystemExit("--workers starts its own servers; leave out --url")
    if args.workers and args.database_url:
        raise SystemExit("--workers needs a new database per sitting; leave out --database-url")

    log_dir = Path(os.environ.get("LOAD_SERVER_LOG_DIR") or tempfile.mkdtemp())
    rows: list[tuple[str, Figures, float]] = []
    if args.url:
        figures, wall = asyncio.run(
            load(args.url, args.learners, args.seconds, (args.think_min, args.think_max),
                 args.seed)
        )  # fmt: skip
        rows.append((args.url, figures, wall))
    else:
        rows.append(("embedded pool", *sitting(args, log_dir / "embedded", 0)))
        if args.workers:
            label = f"1 web + {args.workers} workers"
            rows.append((label, *sitting(args, log_dir / "queue", args.workers)))

    all_met, all_errors = True, 0
    for label, figures, wall in rows:
        met, errors = report(label, args.learners, figures, wall)
        all_met, all_errors = all_met and met, all_errors + errors
    if len(rows) > 1:
        compare(rows)
    if all_errors and not args.url:
        print(f"server logs: {log_dir}")
    return 0 if all_met else 1


if __name__ == "__main__":
    sys.exit(main())
