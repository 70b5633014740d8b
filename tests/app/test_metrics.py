"""/metrics: Prometheus's text format with the pool's state, job times and the cache hit rate
(the embedded pool here; tests/taskqueue has the task queue's)."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from tests.crash.learners import STEP, form_fields


def samples(client) -> dict[str, float]:
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    found = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            labels = ",".join(f'{k}="{v}"' for k, v in sorted(sample.labels.items()))
            found[f"{sample.name}{{{labels}}}" if labels else sample.name] = sample.value
    return found


def run_step(client) -> None:
    form = form_fields(client.get(f"/steps/{STEP}").text)
    response = client.post(f"/steps/{STEP}/run", data=form, headers={"HX-Request": "true"})
    assert response.status_code == 200


def test_metrics_report_the_embedded_pool_and_no_broker(make_client):
    found = samples(make_client(sim_workers=3))
    assert found["designlab_workers"] == 3
    assert found["designlab_queue_depth"] == 0
    assert found["designlab_jobs_running"] == 0
    assert "designlab_broker_up" not in found


def test_a_run_counts_its_simulations_and_a_second_run_its_cache_hits(make_client):
    client = make_client()
    before = samples(client)
    run_step(client)
    after_first = samples(client)
    submitted = after_first["designlab_simulation_jobs_submitted_total"] - before.get(
        "designlab_simulation_jobs_submitted_total", 0
    )
    misses = 'designlab_result_cache_lookups_total{result="miss"}'
    hits = 'designlab_result_cache_lookups_total{result="hit"}'
    assert submitted >= 1
    assert after_first[misses] - before.get(misses, 0) == submitted
    assert (
        after_first['designlab_simulation_job_seconds_count{outcome="ok"}']
        - before.get('designlab_simulation_job_seconds_count{outcome="ok"}', 0)
        == submitted
    )

    run_step(client)
    after_second = samples(client)
    assert (
        after_second["designlab_simulation_jobs_submitted_total"]
        == (after_first["designlab_simulation_jobs_submitted_total"])
    ), "the second run was served from the cache"
    assert after_second[hits] - after_first.get(hits, 0) == submitted
    assert 0 < after_second["designlab_result_cache_hit_ratio"] <= 1
