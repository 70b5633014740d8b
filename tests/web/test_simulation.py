"""Running a step: save, simulate (cached), grade, record; results, fault figures and charts;
errors that keep what the learner typed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.check_outcomes import CheckOutcome
from app.grading.grader import grade, load_material
from app.models import DesignRecord, SimResult, StepProgress, StepStatus
from app.web.formatting import drain
from simulator.design import Design
from simulator.files import load_model
from tests.web.html import soup
from tests.web.learner import HX, rows, step_form, words
from tests.web.learner_course import write_learner_course

DURABLE = "durable_same_transaction"


@pytest.fixture
def learner_dir(tmp_path: Path) -> Path:
    return write_learner_course(tmp_path / "course")


@pytest.fixture
def learner(make_client, learner_dir):
    client = make_client(steps_dir=learner_dir)
    assert client.get("/steps/event-log").status_code == 200, "the learner course must load"
    return client


def run(client, slug: str, headers=HX, **values: str):
    form = step_form(client, slug, **values)
    return client.post(f"/steps/{slug}/run", data=form, headers=headers)


def test_failed_checks_come_first_with_the_learners_numbers_hint_and_concept(learner):
    response = run(learner, "event-log", event_log__partitions="12")
    assert response.status_code == 200
    checks = soup(response).select("#results ol.checks > li")
    assert [li["id"] for li in checks] == ["check-enough-partitions", "check-durable-dedupe"]
    first = checks[0]
    assert first["class"] == ["check", "check-fail"]
    assert first.select_one(".check-points").get_text() == "0/3"
    assert first.select_one(".why").get_text(" ", strip=True) == "Why: 12 partitions, 24 needed"
    assert first.select_one(".hint").get_text(" ", strip=True) == "Hint: Add partitions."
    assert first.select_one(".concept a")["href"] == "#partitions"
    # the link reads the heading it points at
    assert first.select_one(".concept a").get_text(strip=True) == "Read: Partitions ↑"


def test_passed_checks_follow_the_failed_ones_in_declared_order(learner):
    response = run(learner, "event-log", event_log__partitions="32")
    ids = [li["id"] for li in soup(response).select("#results ol.checks > li")]
    assert ids == ["check-durable-dedupe", "check-enough-partitions"]
    verdict = words(soup(response).select_one("#results .verdict"))
    assert verdict.startswith("3/5 points · 1 of 2 checks did not pass.")


def test_points_are_the_graders_for_the_saved_design(learner, make_settings, learner_dir):
    response = run(learner, "event-log", event_log__partitions="30", delivery__dedupe="in_memory")
    (record,) = rows(make_settings(), DesignRecord)
    design = load_model(Design, record.yaml_text, "design.yaml")
    assert (design.event_log.partitions, design.delivery.dedupe) == (30, "in_memory")
    expected = {s.id: s for s in grade(design, load_material(learner_dir)).steps}["event-log"]
    verdict = soup(response).select_one("#results .verdict strong").get_text()
    assert verdict == f"{expected.points}/{expected.max_points} points"


def test_the_same_design_runs_once_then_comes_from_the_cache(learner, make_settings, monkeypatch):
    run(learner, "event-log", event_log__partitions="32")
    (cached,) = rows(make_settings(), SimResult)
    assert cached.scenario_name == "crash" and cached.seed == 11

    async def no_simulation(*args):
        raise AssertionError("simulated although the result is cached")

    monkeypatch.setattr("app.step_runs.simulate_off_loop", no_simulation)
    again = run(learner, "event-log", event_log__partitions="32")
    assert again.status_code == 200
    assert len(rows(make_settings(), SimResult)) == 1
    assert soup(again).select_one("#results .verdict strong").get_text() == "3/5 points"


def test_without_javascript_a_run_redirects_to_the_step_showing_its_results(learner):
    response = learner.post(
        "/steps/event-log/run",
        data=step_form(learner, "event-log", event_log__partitions="40"),
        follow_redirects=False,
    )
    assert response.status_code == 303
    assert response.headers["location"].endswith("/steps/event-log#results")
    page = soup(learner.get("/steps/event-log"))
    assert page.select_one("input[name='event_log.partitions']")["value"] == "40"
    assert len(page.select("#results ol.checks > li")) == 2
    assert page.select_one("#architecture svg.diagram") is not None


def test_htmx_run_updates_rail_architecture_version_and_account_out_of_band(learner):
    response = run(learner, "event-log", event_log__partitions="32")
    top = {el.get("id"): el.get("hx-swap-oob") for el in soup(response).find_all(recursive=False)}
    assert top == {
        "results": None,
        "rail": "true",
        "design-version": "true",
        "architecture": "true",
        "account": "true",
    }
    page = soup(response)
    assert page.select_one("#design-version")["value"] == "1"
    assert words(page.select_one("#account span")) == "Progress kept in this browser"
    step2 = page.select_one("#rail li:nth-of-type(2) a")
    assert step2["aria-label"] == "Step 2: The event log, 3/5, try again"
    assert page.select_one("#rail li:nth-of-type(2) .glyph").get_text() == "✗"


def test_a_run_records_progress_and_each_checks_verdict(learner, make_settings):
    run(learner, "event-log", event_log__partitions="12")
    run(
        learner,
        "event-log",
        event_log__partitions="24",
        delivery__dedupe="durable_same_transaction",
    )
    settings = make_settings()
    progress = {p.step_id: p for p in rows(settings, StepProgress)}["event-log"]
    assert (progress.status, progress.points, progress.max_points, progress.attempts) == (
        StepStatus.passed,
        5,
        5,
        2,
    )
    outcomes = {o.check_id: o for o in rows(settings, CheckOutcome)}
    assert (
        outcomes["enough-partitions"].first_status,
        outcomes["enough-partitions"].last_status,
    ) == (
        "fail",
        "pass",
    )
    assert outcomes["enough-partitions"].attempts == 2


def test_a_fault_step_shows_the_four_figures_and_shades_the_fault(learner, make_settings):
    response = run(learner, "event-log", event_log__partitions="32")
    page = soup(response)
    figures = page.select(".big-figures > div")
    assert [d.select_one("dt").get_text() for d in figures] == [
        "Events lost",
        "Duplicate effects",
        "Tokens paid again",
        "Time to drain",
    ]
    (cached,) = rows(make_settings(), SimResult)
    metrics = json.loads(cached.result_json)["metrics"]
    every_loss = metrics["lost"] + (metrics["publishes_lost"] or 0) + metrics["state_writes_lost"]
    assert figures[0].select_one("dd").get_text() == f"{every_loss:,}"
    assert figures[1].select_one("dd").get_text() == f"{metrics['duplicate_effects']:,}"
    assert figures[2].select_one("dd").get_text() == f"{metrics['tokens_repeated']:,}"
    expected_drain = drain(metrics["drain_seconds"], metrics["drain_note"])
    assert figures[3].select_one("dd").get_text() == expected_drain
    behind = page.select_one("#backlog-at-restart").get_text()
    waiting = metrics["backlog_at_restart"]
    assert waiting > 1, "the worker-crash scenario leaves work for the crashed workers"
    assert behind.startswith(
        f"{waiting:,} events of the crashed group came due while its workers were down and were "
        "still unstarted when they came back"
    )
    assert f"peaked at {metrics['backlog_peak']:,} above normal" in behind
    assert "the lag in the chart counts only the events in the log" in behind
    if metrics["lag_total_max"] < metrics["backlog_peak"]:
        assert behind.endswith(f"so it peaked lower, at {metrics['lag_total_max']:,}.")
    again = page.select_one("#reprocessing").get_text()
    if metrics["redelivered"]:
        rate = f"{100 * metrics['reprocessing_rate']:.2f} %"
        assert again.startswith(f"{metrics['redelivered']:,} records were consumed again")
        assert f"re-processing rate {rate}" in again
    else:
        assert again.startswith("No record was consumed twice")
    lag = json.loads(page.select_one("script#chart-lag-data").get_text())
    assert lag["windows"] == [{"label": "worker crash", "start": 30.0, "end": 60.0}]
    assert (lag["x"]["label"], lag["y"]["label"]) == ("time (s)", "lag (step events)")
    summaries = [p.get_text() for p in page.select("figure.chart .chart-summary")]
    assert len(summaries) == 3 and "Worker crash from 30 s to 1 min (shaded)." in summaries[0]


def test_an_out_of_range_value_keeps_the_input_with_the_message_at_the_field(
    learner, make_settings
):
    response = run(learner, "event-log", event_log__partitions="0", delivery__dedupe="in_memory")
    assert response.status_code == 422
    assert response.headers["HX-Retarget"] == "#decisions"
    page = soup(response)
    field = page.select_one("input[name='event_log.partitions']")
    assert (field["value"], field["aria-invalid"]) == ("0", "true")
    assert page.select_one(f"#{field['id']}-error").get_text() == (
        "Enter at least 1 partitions; got 0."
    )
    assert page.select_one("input[value=in_memory]").has_attr("checked")
    assert rows(make_settings(), DesignRecord) == []


def test_a_wrong_type_is_reported_at_the_field(learner):
    response = run(learner, "event-log", event_log__partitions="lots")
    assert response.status_code == 422
    page = soup(response)
    field = page.select_one("input[name='event_log.partitions']")
    assert field["value"] == "lots"
    assert page.select_one(f"#{field['id']}-error").get_text() != ""


def test_an_expired_session_keeps_the_input_and_asks_to_submit_again(make_client, learner_dir):
    client = make_client(steps_dir=learner_dir)
    form = step_form(client, "event-log", event_log__partitions="48")
    client.cookies.clear()  # the session cookie expired
    response = client.post("/steps/event-log/run", data=form, headers=HX)
    assert response.status_code == 403
    page = soup(response)
    assert "Your session expired" in page.select_one(".form-error").get_text()
    assert page.select_one("input[name='event_log.partitions']")["value"] == "48"
    again = client.post(
        "/steps/event-log/run",
        data={**form, "csrf_token": page.select_one("input[name=csrf_token]")["value"]},
        headers=HX,
    )
    assert again.status_code == 200


def test_a_stale_tab_keeps_its_values_and_saving_again_overwrites(learner, make_settings):
    tab_a = step_form(learner, "event-log", event_log__partitions="20")
    tab_b = step_form(learner, "event-log", event_log__partitions="64")
    assert learner.post("/steps/event-log", data=tab_a, headers=HX).status_code == 200
    stale = learner.post("/steps/event-log/run", data=tab_b, headers=HX)
    assert stale.status_code == 409
    page = soup(stale)
    assert "saved elsewhere" in page.select_one(".form-error").get_text()
    assert page.select_one("input[name='event_log.partitions']")["value"] == "64"
    assert page.select_one("#design-version")["value"] == "1"
    (record,) = rows(make_settings(), DesignRecord)
    assert "partitions: 20" in record.yaml_text
    retry = {**tab_b, "design_version": "1", "conflict_fields": "event_log.partitions"}
    retry["keep:event_log.partitions"] = "mine"
    assert learner.post("/steps/event-log", data=retry, headers=HX).status_code == 200
    (record,) = rows(make_settings(), DesignRecord)
    assert "partitions: 64" in record.yaml_text


def test_results_already_simulated_for_the_new_design_say_they_are_not_counted_yet(
    learner, make_client, learner_dir, make_settings
):
    run(learner, "event-log", event_log__partitions="32")
    changed = step_form(learner, "commit-order", delivery__commit="after_processing")
    assert learner.post("/steps/commit-order", data=changed, headers=HX).status_code == 200
    # Another learner with the same design runs the step: its simulation is now cached.
    other = make_client(steps_dir=learner_dir)
    same = step_form(other, "commit-order", delivery__commit="after_processing")
    assert other.post("/steps/commit-order", data=same, headers=HX).status_code == 200
    assert run(other, "event-log", event_log__partitions="32").status_code == 200
    page = soup(learner.get("/steps/event-log"))
    assert page.select_one("#results ol.checks") is not None
    note = page.select_one("#uncounted-note").get_text(" ", strip=True)
    # The score so far leaves a step to re-run out (app.progress.score_so_far): the note says so.
    assert "your score counts nothing for this step until you run it" in note
    assert page.select_one("#rail li:nth-of-type(2) .glyph").get_text() == "↻"
    counted = soup(run(learner, "event-log", event_log__partitions="32"))
    assert counted.select_one("#uncounted-note") is None


def test_changing_an_earlier_decision_marks_later_steps_to_rerun(learner, make_settings):
    run(learner, "event-log", event_log__partitions="32")
    unchanged = step_form(learner, "commit-order")
    before = learner.post("/steps/commit-order", data=unchanged, headers=HX)
    status = {p.step_id: p.status for p in rows(make_settings(), StepProgress)}
    assert status["event-log"] is StepStatus.failed
    score = soup(before).select_one("#rail[hx-swap-oob] p.score").get_text(" ", strip=True)
    assert not score.startswith("score so far 0/") and "re-run" not in score
    changed = step_form(learner, "commit-order", delivery__commit="after_processing")
    response = learner.post("/steps/commit-order", data=changed, headers=HX)
    rail = soup(response).select_one("#rail[hx-swap-oob]")
    assert rail.select_one("li:nth-of-type(2) .glyph").get_text() == "↻"
    # The score so far no longer counts the run that no longer stands, and says why.
    score = rail.select_one("p.score").get_text(" ", strip=True)
    assert score.startswith("score so far 0/") and "1 step to re-run" in score
    page = soup(learner.get("/steps/event-log"))
    assert page.select_one("#results ol.checks") is None
    assert "changed since your last run" in page.select_one("#results .notice").get_text()


def _dead_worker_error():
    """What the pool raises when the worker simulating dies (app.simpool)."""
    from pebble import ProcessExpired

    from app.simpool import Job, PoolLimits, SimulationPool

    pool = SimulationPool(PoolLimits(workers=1, timeout_seconds=30, max_step_events=2_000_000))
    scenario = load_material(write_learner_course_for_errors()).loaded.scenarios["crash"]
    job = Job("address:testclient", Design(), scenario, 11, 0.0, 30.0, 0)
    return pool._refusal(ProcessExpired("Abnormal termination", code=-9, pid=1), job)


def write_learner_course_for_errors() -> Path:
    import tempfile

    return write_learner_course(Path(tempfile.mkdtemp(prefix="designlab-course-")) / "course")


def test_case_4_a_dead_worker_records_no_attempt_no_verdict_and_says_try_again(
    learner, make_settings, monkeypatch, caplog
):
    """The worker dies mid-run: 503 with Retry-After, the learner reads that the simulation could
    not run, nothing was counted, try again; no attempt and no first verdict are recorded, so
    the next real run is the learner's first; the 503 is logged with the request id."""
    from app.logs import RequestIdFilter

    died = _dead_worker_error()

    async def dead_worker(*args):
        raise died

    monkeypatch.setattr("app.step_runs.simulate_off_loop", dead_worker)
    caplog.handler.addFilter(RequestIdFilter())
    form = step_form(learner, "event-log", event_log__partitions="12")
    response = learner.post(
        "/steps/event-log/run", data=form, headers={**HX, "X-Request-ID": "case-4-run"}
    )
    assert response.status_code == 503
    assert int(response.headers["Retry-After"]) >= 1
    assert response.headers["HX-Retarget"] == "#request-error"
    box = words(soup(response).select_one("#request-error"))
    assert box.startswith("The simulation could not run")
    assert "Nothing was counted; try again" in box
    assert "BrokenProcessPool" not in response.text and "ProcessExpired" not in response.text
    settings = make_settings()
    assert rows(settings, CheckOutcome) == []
    progress = {p.step_id: p for p in rows(settings, StepProgress)}["event-log"]
    assert (progress.attempts, progress.status) == (0, StepStatus.in_progress)
    logged = [r for r in caplog.records if r.levelname == "WARNING" and "503" in r.getMessage()]
    assert logged and logged[0].request_id == "case-4-run"

    monkeypatch.undo()
    run(learner, "event-log", event_log__partitions="12")
    outcomes = {o.check_id: o for o in rows(settings, CheckOutcome)}
    assert outcomes["enough-partitions"].first_status == "fail"
    assert outcomes["enough-partitions"].attempts == 1


def test_case_4_without_javascript_a_dead_worker_is_a_503_page_saying_try_again(
    learner, make_settings, monkeypatch
):
    died = _dead_worker_error()

    async def dead_worker(*args):
        raise died

    monkeypatch.setattr("app.step_runs.simulate_off_loop", dead_worker)
    form = step_form(learner, "event-log", event_log__partitions="30")
    response = learner.post("/steps/event-log/run", data=form, follow_redirects=False)
    assert response.status_code == 503 and response.headers["Retry-After"]
    assert "Nothing was counted; try again" in words(soup(response).select_one(".error-box"))
    assert rows(make_settings(), CheckOutcome) == []


def test_case_4_a_run_over_the_size_budget_is_refused_naming_fields_and_not_counted(
    make_client, learner_dir, make_settings
):
    client = make_client(steps_dir=learner_dir, sim_max_step_events=10)
    response = run(client, "event-log", event_log__partitions="12")
    assert response.status_code == 422
    box = soup(response).select_one("#request-error")
    assert box is not None and "too large to simulate" in words(box)
    assert "duration_seconds" in words(box)
    assert rows(make_settings(), CheckOutcome) == []
    progress = {p.step_id: p for p in rows(make_settings(), StepProgress)}["event-log"]
    assert progress.attempts == 0


def _htmx_rule(page, status: int) -> dict:
    """The first responseHandling rule of the page's htmx config that matches ``status`` (htmx 2
    takes the first whose ``code`` pattern matches)."""
    import re

    config = json.loads(page.select_one("meta[name='htmx-config']")["content"])
    return next(r for r in config["responseHandling"] if re.match(r["code"], str(status)))


def test_case_5_with_htmx_a_429s_try_again_in_n_s_reaches_the_learner(make_client, learner_dir):
    """Over the simulation rate limit, the server's "Try again in N s" is swapped into the step
    page's #request-error box: htmx is told to swap 429 (and 503), and the answer is retargeted
    there whatever the button's target."""
    client = make_client(steps_dir=learner_dir, rate_limit_simulate="1/minute")
    page = soup(client.get("/steps/event-log"))
    assert page.select_one("#request-error") is not None
    for status in (429, 503):
        assert _htmx_rule(page, status)["swap"] is True
        assert not _htmx_rule(page, status).get("error")
    assert _htmx_rule(page, 500)["swap"] is False
    answers = [run(client, "event-log", event_log__partitions="12") for _ in range(3)]
    assert answers[0].status_code == 200
    limited = answers[-1]  # a guest made by the first run may get a budget of its own once
    assert limited.status_code == 429
    assert limited.headers["HX-Retarget"] == "#request-error"
    assert limited.headers["HX-Reswap"] == "outerHTML"
    retry = limited.headers["Retry-After"]
    box = words(soup(limited).select_one("#request-error"))
    assert f"Try again in {retry} s." in box
