"""STEPS_DIR pointed at the second course serves that course: its pages, its grading, and the
instructor's view of learners who ran its steps through the browser routes."""

from __future__ import annotations

import re

import pytest

from app.models import Role
from tests.instructor.second_course import SECOND_COURSE, STEPS
from tests.instructor.signing_in import add_user, sign_in
from tests.web.html import csrf_of, soup


@pytest.fixture
def client(make_client):
    return make_client(steps_dir=SECOND_COURSE)


def run_step_1(client, partitions: int) -> tuple[int, list[tuple[str, str]]]:
    """Run step 1 with ``partitions`` as the signed-in learner; (points, [(check, status)])."""
    page = soup(client.get("/steps/size-the-group"))
    form = {
        "csrf_token": csrf_of(page),
        "design_version": page.select_one("input[name=design_version]")["value"],
        "event_log.partitions": str(partitions),
        "event_log.partition_key": "run_id",
        "consumers.agent.instances": "4",
        "consumers.agent.concurrency_per_instance": "16",
    }
    response = client.post("/steps/size-the-group/run", data=form, headers={"HX-Request": "true"})
    assert response.status_code == 200, response.text
    results = soup(response)
    points = re.match(r"(\d+)/10 points", results.select_one(".verdict strong").get_text())
    assert points is not None
    checks = [
        (li["id"].removeprefix("check-"), li["class"][1]) for li in results.select("li.check")
    ]
    return int(points.group(1)), checks


def test_the_overview_and_every_step_are_the_second_courses(client):
    page = soup(client.get("/"))
    assert page.select_one("h1").get_text(strip=True) == "Apply order events exactly once"
    assert page.select_one("p.meta").get_text(strip=True) == "Medium · 3 steps · ~15 min"
    assert [li["data-step"] for li in page.select("ol.steps > li.step-item")] == list(STEPS)
    for number, slug in enumerate(STEPS, start=1):
        response = client.get(f"/steps/{slug}")
        assert response.status_code == 200, slug
        heading = soup(response).select_one("h1 .step-number").get_text(strip=True)
        assert heading == f"Step {number}"


def test_the_narrative_shows_figures_computed_from_the_second_courses_scenario(client):
    text = soup(client.get("/steps/size-the-group")).select_one("article.narrative").get_text()
    assert "so 50 events are being applied at any moment" in " ".join(text.split())


def test_learners_runs_reach_the_instructors_class_table(client, make_settings):
    settings = make_settings()
    add_user(settings, "lea@example.com", Role.learner)
    add_user(settings, "ina@example.com", Role.instructor)
    sign_in(client, "lea@example.com")
    first_points, first = run_step_1(client, 40)
    assert ("partitions-cover-in-flight", "check-fail") in first
    second_points, second = run_step_1(client, 64)
    assert ("partitions-cover-in-flight", "check-pass") in second
    assert second_points >= first_points + 3

    sign_in(client, "ina@example.com")
    page = soup(client.get("/instructor"))
    (row,) = page.select("table.class-table tbody tr")
    assert row.select_one("th").get_text(strip=True) == "lea@example.com"
    cell = row.select("td.cell")[0]
    assert cell.select_one(".points").get_text(strip=True) == f"{second_points}/10"
    assert cell.select_one(".attempts").get_text(strip=True) == "×2"
    hardest = page.select_one("tr[data-check='size-the-group/partitions-cover-in-flight']")
    assert "1 of 1 (100 %)" in " ".join(hardest.get_text(" ", strip=True).split())
    assert hardest.select_one(".failed-now").get_text(strip=True) == "0"
