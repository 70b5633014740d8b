"""Two web instances and two ``designlab worker`` processes on one PostgreSQL database and one
Redis server: a run made through one instance is served from the shared cache through the other;
a worker SIGKILLed mid-job has its job finished once, by the other worker; the rate limit holds
across both instances; a broker restart loses no accepted job and leaves none running.

Needs DATABASE_URL_TEST and REDIS_URL_TEST (``.ci/run`` starts both servers); skipped without.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from sqlalchemy import create_engine, func, select

from app.models import SimResult
from tests.crash.learners import STEP, form_fields
from tests.live_server import REPO
from tests.taskqueue.cluster import Cluster, wait_for
from tests.taskqueue.redis_server import RedisServer

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

DESIGN = (REPO / "steps" / "designs" / "reference.yaml").read_bytes()


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A Redis server of this test's own."""
    server = RedisServer(tmp_path / "redis").start()
    yield server
    server.stop()


@pytest.fixture
def make_cluster(postgres_databases, redis_server: RedisServer, tmp_path: Path):
    """Builds and starts a Cluster (2 web, 2 workers) on a new database; stops it afterwards."""
    made: list[tuple[Cluster, str]] = []

    def build(webs: int = 2, workers: int = 2, **env: str) -> Cluster:
        url = postgres_databases.create()
        cluster = Cluster(tmp_path, url, redis_server.url, webs=webs, workers=workers, env=env)
        made.append((cluster, url))
        try:
            return cluster.start()
        except Exception:
            cluster.stop()
            raise

    yield build
    for cluster, url in made:
        cluster.stop()
        postgres_databases.drop(url)


def simulate(base_url: str, seed: int, timeout_s: float = 240) -> httpx.Response:
    """POST /api/v1/simulate of the reference design under ``peak`` with ``seed``."""
    return httpx.post(
        f"{base_url}/api/v1/simulate",
        params={"scenario": "peak", "seed": seed},
        content=DESIGN,
        headers={"Content-Type": "application/yaml"},
        timeout=timeout_s,
    )


def stored_results(database_url: str) -> int:
    engine = create_engine(database_url)
    with engine.connect() as conn:
        count = conn.execute(select(func.count()).select_from(SimResult)).scalar_one()
    engine.dispose()
    return int(count)


def test_a_run_through_instance_one_is_served_from_the_cache_through_instance_two(make_cluster):
    cluster = make_cluster()
    cluster.gate.open()
    a, b = cluster.webs
    with httpx.Client(timeout=240) as browser:
        form = form_fields(browser.get(f"{a.url}/steps/{STEP}").text)
        first = browser.post(f"{a.url}/steps/{STEP}/run", data=form, headers={"HX-Request": "true"})
        assert first.status_code == 200, cluster.logs()
        form = form_fields(browser.get(f"{b.url}/steps/{STEP}").text)
        again = browser.post(f"{b.url}/steps/{STEP}/run", data=form, headers={"HX-Request": "true"})
        assert again.status_code == 200, cluster.logs()

    submitted_a = cluster.metric("designlab_simulation_jobs_submitted_total", web=0)
    assert submitted_a >= 1, "instance 1 sent its run to the workers"
    assert cluster.metric("designlab_simulation_jobs_submitted_total", web=1) == 0, (
        "instance 2 simulated again instead of reading the shared cache"
    )
    hits = cluster.metric('designlab_result_cache_lookups_total{result="hit"}', web=1)
    assert hits == submitted_a
    assert cluster.metric("designlab_result_cache_hit_ratio", web=1) == 1.0
    done = [r for w in cluster.workers for r in w.jobs_done() if not r["cached"]]
    assert len(done) == submitted_a, "each simulation ran once, on a worker"


def test_a_worker_killed_mid_job_has_its_job_finished_once_by_the_other_worker(make_cluster):
    cluster = make_cluster(TASK_VISIBILITY_TIMEOUT_SECONDS="16")
    with ThreadPoolExecutor(1) as pool:
        answer = pool.submit(simulate, cluster.webs[0].url, 11)
        first_worker, job_id = wait_for(cluster.gate.started, "the job to start")[0]
        killed = next(w for w in cluster.workers if w.celery_name == first_worker)
        other = next(w for w in cluster.workers if w is not killed)
        killed.kill()
        retaken = wait_for(
            lambda: [s for s in cluster.gate.started() if s[0] == other.celery_name],
            "the other worker to take the job again",
            timeout_s=180,
        )
        assert retaken == [(other.celery_name, job_id)]
        cluster.gate.open()
        response = answer.result(timeout=240)

    assert response.status_code == 200, f"{response.text}\n{cluster.logs()}"
    assert response.json()["seed"] == 11
    done = [r for r in other.jobs_done() if r["job_id"] == job_id]
    assert [(r["worker"], r["cached"]) for r in done] == [(other.celery_name, False)], (
        cluster.logs()
    )
    assert killed.jobs_done() == [], "the killed worker finished nothing"
    assert stored_results(cluster.env["DATABASE_URL"]) == 1, "the result is recorded once"


def test_the_rate_limit_holds_across_both_instances(make_cluster):
    cluster = make_cluster(RATE_LIMIT_SIMULATE="3/minute")
    cluster.gate.open()
    a, b = cluster.webs
    statuses = [simulate(web.url, seed=1).status_code for web in (a, b, a, b)]
    assert statuses == [200, 200, 200, 429], "each instance counted on its own"
    refused = simulate(a.url, seed=1)
    assert refused.status_code == 429
    assert int(refused.headers["Retry-After"]) >= 1


def test_a_web_instance_serves_pages_while_its_run_waits_for_a_worker(make_cluster):
    cluster = make_cluster(webs=1, workers=1)
    web = cluster.webs[0]
    with httpx.Client(timeout=240) as browser, ThreadPoolExecutor(1) as pool:
        form = form_fields(browser.get(f"{web.url}/steps/{STEP}").text)
        run = pool.submit(
            browser.post, f"{web.url}/steps/{STEP}/run", data=form, headers={"HX-Request": "true"}
        )
        wait_for(cluster.gate.started, "the run's job to be held on the worker")
        # The run's request awaits its job on this instance's event loop: pages still answer.
        with httpx.Client(timeout=60) as other:
            assert other.get(f"{web.url}/steps/{STEP}").status_code == 200
            wait_for(  # the reading is at most 2 s old
                lambda: other.get(f"{web.url}/healthz").json()["task_queue"]["jobs_running"] == 1,
                "the worker to report the held job as running",
            )
        assert cluster.metric("designlab_simulation_jobs_waiting") == 1
        assert not run.done()
        cluster.gate.open()
        assert run.result(timeout=240).status_code == 200, cluster.logs()


def test_the_wall_time_budget_holds_in_the_worker(make_cluster):
    cluster = make_cluster(webs=1, workers=1, SIM_TIMEOUT_SECONDS="2")
    response = simulate(cluster.webs[0].url, seed=3)  # held at the closed gate past 2 s
    assert response.status_code == 422, response.text
    assert "took longer than the 2 s one simulation may use" in response.json()["error"]["detail"]
    assert stored_results(cluster.env["DATABASE_URL"]) == 0


def test_a_broker_restart_loses_no_accepted_job_and_leaves_none_running(
    make_cluster, redis_server: RedisServer
):
    cluster = make_cluster(TASK_VISIBILITY_TIMEOUT_SECONDS="16")
    seeds = [21, 22, 23, 24]
    with ThreadPoolExecutor(len(seeds)) as pool:
        answers: list[Future[httpx.Response]] = [
            pool.submit(simulate, cluster.webs[i % 2].url, seed) for i, seed in enumerate(seeds)
        ]
        wait_for(lambda: len(cluster.gate.started()) == 2, "one job held on each worker")
        wait_for(lambda: cluster.health()["task_queue"]["queue_depth"] == 2, "two jobs queued")
        redis_server.restart()
        cluster.gate.open()
        responses = [future.result(timeout=300) for future in answers]

    for seed, response in zip(seeds, responses, strict=True):
        if response.status_code == 200:
            assert response.json()["seed"] == seed
        else:  # reported failed, with a reason: never a silent loss
            assert response.status_code >= 500 and response.json().get("detail"), response.text
    assert all(r.status_code == 200 for r in responses), (
        f"{[r.status_code for r in responses]}: a job accepted before the restart was lost\n"
        f"{cluster.logs()}"
    )
    assert stored_results(cluster.env["DATABASE_URL"]) == len(seeds)

    def settled() -> bool:
        queue = cluster.health()["task_queue"]
        return bool(queue["broker"] == "ok" and queue["jobs_running"] == 0
                    and queue["queue_depth"] == 0 and queue["workers"] == 2)  # fmt: skip

    wait_for(settled, "no job left running or queued after the restart", timeout_s=180)
