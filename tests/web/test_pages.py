"""Overview and step pages: parsed HTML, fragments for htmx, the decision form round trip."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select

from app.course.loader import load_course
from app.db import make_engine, make_sessionmaker
from app.models import DesignRecord, StepProgress, StepStatus
from tests.factories import write
from tests.web.html import csrf_of, soup, unlabelled_controls
from tests.web.learner import words

REPO_STEPS = Path(__file__).resolve().parents[2] / "steps"


def test_overview_lists_the_thirteen_steps_with_titles_in_order(client):
    page = soup(client.get("/"))
    course = load_course(REPO_STEPS)
    items = page.select("ol.steps > li.step-item")
    assert [li["data-step"] for li in items] == [s.slug for s in course.steps]
    assert len(items) == 13
    titles = [li.select_one("a, span.title").get_text(strip=True) for li in items]
    assert titles == [s.title for s in course.steps]
    assert page.select_one("h1").get_text(strip=True) == "Design a durable multi-agent workflow"
    assert page.select_one("p.meta").get_text(strip=True) == "Hard · 13 steps · ~50 min"


def test_overview_has_the_sections_and_one_primary_start_button(client):
    page = soup(client.get("/"))
    headings = [h.get_text(strip=True) for h in page.select("h2")]
    assert headings == ["How it works", "What you'll build", "The steps"]
    assert len(page.select("section[aria-labelledby=how] li")) == 4
    assert len(page.select("section[aria-labelledby=build] li")) == 3
    (button,) = page.select("a.button.primary")
    assert button.get_text(strip=True) == "Start"
    assert button["href"].endswith("/steps/run-api")


def test_every_step_starts_not_started(course_client):
    page = soup(course_client.get("/"))
    badges = [b.get_text(strip=True) for b in page.select("li.step-item .badge")]
    assert badges == ["not started"] * 3


def test_step_page_has_rail_narrative_and_a_labelled_form(course_client):
    response = course_client.get("/steps/commit-order")
    assert response.status_code == 200
    assert response.headers["vary"].startswith("HX-Request")
    page = soup(response)
    assert page.select_one("h1").get_text(" ", strip=True) == "Step 1 · Commit after processing"
    assert page.select_one("nav.rail a[aria-current=step]").get_text(strip=True) == "1"
    assert page.select_one("article.narrative h2#commit-order").get_text() == "Commit order"
    form = page.select_one("#decisions form")
    assert form["method"] == "post" and form["action"].endswith("/steps/commit-order")
    assert unlabelled_controls(page) == []
    radios = form.select("input[type=radio][name='delivery.commit']")
    # No choices in the step: one radio per value of the design's commit mode, in its order.
    assert [r["value"] for r in radios] == [
        "after_processing",
        "before_processing",
        "auto",
        "in_effect_transaction",
    ]
    assert [r["value"] for r in radios if r.has_attr("checked")] == ["auto"]
    partitions = form.select_one("input[name='event_log.partitions']")
    assert (partitions["type"], partitions["value"], partitions["min"], partitions["max"]) == (
        "number",
        "12",
        "1.0",
        "256.0",
    )
    assert partitions.find_next_sibling("span", class_="unit").get_text() == "partitions"
    assert page.select_one("#estimate") is not None and page.select_one("#results") is not None


def test_every_shipped_step_renders_with_labelled_controls(client):
    for step in load_course(REPO_STEPS).steps:
        response = client.get(f"/steps/{step.slug}")
        assert response.status_code == (200 if step.available else 503), step.slug
        assert unlabelled_controls(soup(response)) == [], step.slug


def test_htmx_request_gets_only_the_step_fragment(course_client):
    response = course_client.get("/steps/event-log", headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert "<html" not in response.text
    page = soup(response)
    (root,) = page.find_all(recursive=False)
    assert root["id"] == "step"
    assert page.select_one("h1").get_text(" ", strip=True) == "Step 2 · The event log"


def test_unknown_step_is_a_404_page(course_client):
    response = course_client.get("/steps/no-such-step")
    assert response.status_code == 404
    assert soup(response).select_one(".error-box h2").get_text() == "Not found"


def test_saving_decisions_stores_the_design_and_redirects(course_client, make_settings):
    page = soup(course_client.get("/steps/commit-order"))
    form = {
        "csrf_token": csrf_of(page),
        "design_version": "0",
        "delivery.commit": "after_processing",
        "event_log.partitions": "48",
        "delivery.dedupe": "durable_same_transaction",
        "model.cache.enabled": "true",
    }
    response = course_client.post("/steps/commit-order", data=form, follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"].endswith("/steps/commit-order")
    shown = soup(course_client.get("/steps/commit-order"))
    assert shown.select_one("input[name='event_log.partitions']")["value"] == "48"
    assert shown.select_one("input[name='model.cache.enabled']").has_attr("checked")
    factory = make_sessionmaker(make_engine(make_settings().database_url))
    with factory() as session:
        record = session.scalars(select(DesignRecord)).one()
        progress = session.scalars(select(StepProgress)).one()
    assert record.version == 1 and "partitions: 48" in record.yaml_text
    assert (progress.step_id, progress.status) == ("commit-order", StepStatus.in_progress)
    overview = soup(course_client.get("/"))
    assert overview.select_one("a.button.primary").get_text(strip=True) == "Continue at step 1"


def test_an_invalid_value_answers_422_with_the_message_at_the_field(course_client):
    page = soup(course_client.get("/steps/commit-order"))
    form = {"csrf_token": csrf_of(page), "design_version": "0", "event_log.partitions": "0"}
    response = course_client.post("/steps/commit-order", data=form)
    assert response.status_code == 422
    field = soup(response).select_one("input[name='event_log.partitions']")
    assert field["value"] == "0" and field["aria-invalid"] == "true"
    error = soup(response).select_one(f"#{field['id']}-error").get_text()
    assert error == "Enter at least 1 partitions; got 0."


def test_htmx_save_returns_the_decisions_fragment_marked_saved(course_client):
    page = soup(course_client.get("/steps/commit-order"))
    form = {"csrf_token": csrf_of(page), "design_version": "0", "event_log.partitions": "24"}
    response = course_client.post("/steps/commit-order", data=form, headers={"HX-Request": "true"})
    assert response.status_code == 200
    fragment = soup(response)
    assert fragment.find(recursive=False)["id"] == "decisions"
    assert fragment.select_one(".saved").get_text() == "Saved."
    assert fragment.select_one("input[name=design_version]")["value"] == "1"


def test_a_visitors_first_htmx_save_shows_the_guest_header_without_a_reload(course_client):
    page = soup(course_client.get("/steps/commit-order"))
    assert [a.get_text() for a in page.select("#account a")] == ["Sign in", "Sign up"]
    form = {"csrf_token": csrf_of(page), "design_version": "0", "event_log.partitions": "24"}
    response = course_client.post("/steps/commit-order", data=form, headers={"HX-Request": "true"})
    assert response.status_code == 200
    account = soup(response).find("nav", id="account", recursive=False)
    assert account is not None and account["hx-swap-oob"] == "true"
    assert words(account) == "Progress kept in this browser Sign up to keep it Sign in"
    # The links bring the learner back to this step afterwards.
    signup = account.select_one("a[href='/signup?next=%2Fsteps%2Fcommit-order']")
    assert signup is not None and signup.get_text() == "Sign up to keep it"
    reloaded = soup(course_client.get("/steps/commit-order")).select_one("#account")
    assert words(reloaded) == words(account)


def test_a_stale_design_version_is_a_conflict(course_client):
    page = soup(course_client.get("/steps/commit-order"))
    form = {"csrf_token": csrf_of(page), "design_version": "0", "event_log.partitions": "24"}
    assert course_client.post("/steps/commit-order", data=form).status_code == 200
    response = course_client.post("/steps/commit-order", data=form)
    assert response.status_code == 409
    assert "saved elsewhere" in soup(response).select_one(".error-box").get_text()


def test_a_post_without_the_csrf_token_is_refused(course_client):
    course_client.get("/steps/commit-order")
    response = course_client.post("/steps/commit-order", data={"event_log.partitions": "24"})
    assert response.status_code == 403


def test_a_broken_step_is_unavailable_but_the_others_render(make_client, course_dir):
    write(course_dir / "02-event-log" / "step.yaml", "id: event-log\ntitle: [\n")
    client = make_client(steps_dir=course_dir)
    response = client.get("/steps/event-log")
    assert response.status_code == 503
    assert soup(response).select_one(".unavailable .problems") is None  # learners see no paths
    assert client.get("/steps/commit-order").status_code == 200
    badges = [b.get_text(strip=True) for b in soup(client.get("/")).select(".badge")]
    assert badges == ["not started", "unavailable (course error)", "not started"]


def test_on_a_development_instance_the_error_is_shown(make_client, course_dir):
    write(course_dir / "02-event-log" / "step.yaml", "id: event-log\ntitle: [\n")
    client = make_client(steps_dir=course_dir, env="development")
    problem = soup(client.get("/steps/event-log")).select_one(".unavailable .problems li")
    assert "02-event-log/step.yaml:2" in problem.get_text()  # the last line


def test_a_change_under_steps_shows_on_the_next_request_in_development(make_client, course_dir):
    client = make_client(steps_dir=course_dir, env="development")
    assert "The event log" in soup(client.get("/")).select_one("li[data-step=event-log]").text
    path = course_dir / "02-event-log" / "step.yaml"
    path.write_text(path.read_text().replace("The event log", "The partitioned log"))
    item = soup(client.get("/")).select_one("li[data-step=event-log] a")
    assert item.get_text(strip=True) == "The partitioned log"


def test_a_broken_course_yaml_answers_503_with_the_reason(make_client, course_dir):
    write(course_dir / "course.yaml", "version: 1\n")
    client = make_client(steps_dir=course_dir, env="development")
    response = client.get("/")
    assert response.status_code == 503
    text = soup(response).select_one(".error-box").get_text(" ", strip=True)
    assert "course.yaml:1" in text and "budget_usd" in text
