"""The live estimate panel: closed-form figures for the form as typed, nothing saved."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.grading.grader import load_material
from app.models import DesignRecord
from app.web.estimate import estimate_view
from app.web.formatting import duration, eps, percent, usd_short
from simulator.cost import monthly_cost
from simulator.design import Design
from simulator.estimate import estimate
from simulator.files import load_design, load_model
from tests.factories import REPO_STEPS
from tests.web.html import csrf_of, soup
from tests.web.learner import HX, rows, step_form, words
from tests.web.learner_course import write_learner_course


@pytest.fixture
def learner_dir(tmp_path: Path) -> Path:
    return write_learner_course(tmp_path / "course")


@pytest.fixture
def learner(make_client, learner_dir):
    return make_client(steps_dir=learner_dir)


def figures(response) -> dict[str, str]:
    panel = soup(response).select_one("#estimate")
    return {words(d.select_one("dt")): words(d.select_one("dd")) for d in panel.select("dl > div")}


def test_the_panel_shows_the_closed_form_figures_of_the_typed_values(
    learner, learner_dir, make_settings
):
    form = step_form(learner, "event-log", event_log__partitions="48")
    response = learner.post("/steps/event-log/estimate", data=form, headers=HX)
    assert response.status_code == 200
    (root,) = soup(response).find_all(recursive=False)
    assert root["id"] == "estimate"
    material = load_material(learner_dir)
    design = Design().model_copy(deep=True)
    design.event_log.partitions = 48
    scenario = material.loaded.scenarios["crash"]
    expected = estimate(design, scenario)
    cost = monthly_cost(design, scenario, material.pricing, budget_usd=85000)
    shown = figures(response)
    assert shown["Capacity"].startswith(eps(expected.capacity_eps))
    assert shown["Utilisation"].startswith(percent(expected.utilisation))
    # 625 % busy: the queue grows without bound, so no figure for events in flight.
    assert expected.utilisation > 1
    assert shown["Events in flight"].startswith("no bound")
    drain = duration(expected.drain_seconds) if expected.drain_seconds is not None else "never"
    assert shown["Drain time"].startswith(drain)
    assert shown["Monthly cost"].startswith(f"{usd_short(cost.monthly_usd)} of $85k budget")
    assert rows(make_settings(), DesignRecord) == [], "an estimate saves nothing"


def test_more_partitions_raise_the_estimated_capacity(learner):
    low = figures(
        learner.post(
            "/steps/event-log/estimate",
            data=step_form(learner, "event-log", event_log__partitions="2"),
            headers=HX,
        )
    )
    high = figures(
        learner.post(
            "/steps/event-log/estimate",
            data=step_form(learner, "event-log", event_log__partitions="64"),
            headers=HX,
        )
    )
    assert float(low["Capacity"].split("/s")[0]) < float(high["Capacity"].split("/s")[0])


def test_a_value_that_does_not_validate_is_named_in_the_panel(learner):
    form = step_form(learner, "event-log", event_log__partitions="-3")
    response = learner.post("/steps/event-log/estimate", data=form, headers=HX)
    notice = words(soup(response).select_one("#estimate .notice"))
    assert "Partitions: Enter at least 1 partitions; got -3." in notice
    assert "figures are those of your saved design" in notice
    assert figures(response)["Capacity"] != ""


def test_the_step_page_renders_the_estimate_without_javascript(learner):
    page = soup(learner.get("/steps/event-log"))
    assert page.select_one("#estimate h2").get_text() == "Live estimate"
    assert set(figures_of(page)) == {
        "Capacity",
        "Utilisation",
        "Events in flight",
        "Drain time",
        "Monthly cost",
    }
    form = page.select_one("#decision-form")
    assert form["hx-trigger"] == "input changed delay:300ms, change delay:300ms"
    assert form["hx-post"].endswith("/steps/event-log/estimate")


def figures_of(page) -> list[str]:
    return [words(dt) for dt in page.select("#estimate dl dt")]


def test_a_step_without_a_scenario_says_it_puts_no_load(make_client, tmp_path):
    from tests.factories import write, write_course

    root = write_course(tmp_path / "plain")
    step = (root / "01-commit-order" / "step.yaml").read_text().replace("scenario: peak\n", "")
    step = step.replace("expr: metrics.lost == 0", "expr: design.delivery.commit != 'auto'")
    step = step.replace("expr: metrics.processed > 0", "expr: design.delivery.commit != 'auto'")
    step = step.replace('explain: "{{ metrics.lost }} events lost"', 'explain: "commit"')
    write(root / "01-commit-order" / "step.yaml", step)
    page = soup(make_client(steps_dir=root).get("/steps/commit-order"))
    assert "puts no load" in words(page.select_one("#estimate"))
    assert page.select_one("#decision-form button.primary").get_text(strip=True) == "Run the checks"


def test_a_fault_that_builds_no_backlog_is_not_called_no_fault(make_client):
    """The reference design rides out the broker loss (replication factor 3, two in-sync
    replicas, acks=all: producers never block): nothing to drain, but the scenario does have a
    fault."""
    course = Path(__file__).resolve().parents[2] / "steps"
    client = make_client(steps_dir=course)
    token = soup(client.get("/report")).select_one("input[name='csrf_token']")["value"]
    reference = (course / "designs" / "reference.yaml").read_bytes()
    upload = client.post(
        "/design", data={"csrf_token": token}, files={"design": ("design.yaml", reference)}
    )
    assert upload.status_code == 200
    drain = figures(client.get("/steps/event-log"))["Drain time"]
    assert "no backlog expected from this scenario's fault" in drain
    assert "no fault" not in drain


def test_a_backlog_taken_as_the_runs_resume_reads_why_its_drain_is_0(client):
    """Step 9 with the reference design: the worker crash holds about 206 agent calls, which the
    stalled runs release over one run's critical path (about 20 s) as they resume; 13.1/s of
    headroom takes them as they come, so the drain is 0 s. The panel says so instead of "0 s,
    206 events behind"."""
    reference = (REPO_STEPS / "designs" / "reference.yaml").read_bytes()
    token = csrf_of(soup(client.get("/steps/worker-crash")))
    uploaded = client.post(
        "/design",
        data={"csrf_token": token},
        files={"design": ("design.yaml", reference, "application/yaml")},
        follow_redirects=False,
    )
    assert uploaded.status_code == 303
    form = step_form(client, "worker-crash")
    response = client.post("/steps/worker-crash/estimate", data=form, headers=HX)
    drain = figures(response)["Drain time"]
    material = load_material(REPO_STEPS)
    step = next(s for s in material.loaded.steps if s.slug == "worker-crash")
    view = estimate_view(load_design(REPO_STEPS / "designs" / "reference.yaml"), material, step)
    assert view is not None and view.kept_up
    assert view.critical_path_s is not None and 15 < view.critical_path_s < 25
    e = view.estimate
    assert e.drain_seconds == 0 and e.backlog > 100
    assert drain == (
        f"0 s the {e.backlog:,.0f} agent events the fault holds reach the queues as the stalled "
        f"runs resume, over about {duration(view.critical_path_s)} (one run's critical path), "
        f"and {eps(view.headroom_eps)} of headroom takes them as they come: nothing queues "
        "beyond normal"
    )
    assert "behind" not in drain


def _panel(client, slug: str, design_yaml: bytes, **fields: str) -> dict[str, str]:
    token = csrf_of(soup(client.get(f"/steps/{slug}")))
    uploaded = client.post(
        "/design",
        data={"csrf_token": token},
        files={"design": ("design.yaml", design_yaml, "application/yaml")},
        follow_redirects=False,
    )
    assert uploaded.status_code == 303
    form = step_form(client, slug, **fields)
    return figures(client.post(f"/steps/{slug}/estimate", data=form, headers=HX))


def test_a_saturated_design_has_no_figure_for_events_in_flight(client):
    """Step 5 with a TPM the peak overruns (108 %): the queue grows without bound, so the panel
    says so instead of a finite 23.2 events in flight; 0 agent instances (step 7) the same."""
    reference = (REPO_STEPS / "designs" / "reference.yaml").read_bytes()
    shown = _panel(client, "agents-tools-model", reference, model__primary__tpm="1000000")
    assert shown["Utilisation"].startswith("108 %")
    assert shown["Events in flight"] == (
        "no bound the agent group gets more than it can take (108 %), so its queue grows for as "
        "long as the load lasts"
    )
    shown = _panel(client, "evening-peak", reference, consumers__agent__instances="0")
    assert shown["Events in flight"].startswith("no bound")
    assert "(no capacity)" in shown["Events in flight"]
    assert not any(ch.isdigit() for ch in shown["Events in flight"].split("(")[0])


def test_a_design_with_headroom_shows_events_in_flight(client):
    reference = (REPO_STEPS / "designs" / "reference.yaml").read_bytes()
    shown = _panel(client, "agents-tools-model", reference)
    assert shown["Events in flight"] == "23.2 arrivals × step time, every group"


def _drain_of(client, slug: str, **design_fields: str) -> tuple[str, object]:
    reference = (REPO_STEPS / "designs" / "reference.yaml").read_text()
    text = reference
    for old, new in design_fields.items():
        assert old in text
        text = text.replace(old, new)
    shown = _panel(client, slug, text.encode())
    material = load_material(REPO_STEPS)
    step = next(s for s in material.loaded.steps if s.slug == slug)
    view = estimate_view(load_model(Design, text, "design.yaml"), material, step)
    return shown["Drain time"], view


def test_the_drain_names_the_backlog_it_is_counted_from(client):
    """Step 4's instance crash comes twice: 600 agent calls behind after the first, 318 left when
    the second ends, and the 34 s drain is counted from then. The panel said "34 s 600 events
    behind", which 13.1/s of headroom takes 46 s to work off; it names both backlogs."""
    drain, view = _drain_of(client, "exactly-once-effects")
    e = view.estimate
    assert e.backlog == 600 and view.backlog_at_end is not None
    assert 300 < view.backlog_at_end < 330 and not view.kept_up
    assert drain == (
        f"{duration(e.drain_seconds)} {view.backlog_at_end:,.0f} events behind in the agent "
        "group when the last fault ends (of 600 at the worst, worked off in part between the "
        f"faults), worked off at {eps(view.headroom_eps)} of headroom"
    )
    assert e.drain_seconds >= view.backlog_at_end / view.headroom_eps


def test_a_short_drain_beside_a_large_backlog_says_the_queues_took_it(client):
    """Keyed by run: 253 calls are left when step 4's second crash ends, which 13.1/s of headroom
    takes as the runs resume over one critical path (20 s), so the estimate's drain is the 4 s
    before the held runs move. The panel said "4 s 600 events behind in the agent group"."""
    drain, view = _drain_of(
        client, "exactly-once-effects", **{"partition_key: task_id": "partition_key: run_id"}
    )
    assert view.kept_up and view.estimate.drain_seconds is not None
    assert view.estimate.drain_seconds < 5
    assert "600 events behind" not in drain
    assert (
        f"the {view.backlog_at_end:,.0f} agent events the faults still hold when the last ends "
        "(of 600 at the worst) reach the queues as the stalled runs resume"
    ) in drain
    assert view.backlog_at_end <= view.headroom_eps * view.critical_path_s
