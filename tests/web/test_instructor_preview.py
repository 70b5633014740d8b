"""Step preview: a step as a learner sees it, filled with the reference or a known-bad design and
graded; in development a change under STEPS_DIR shows on the next request."""

from __future__ import annotations

import shutil

import pytest

from app.models import Role
from tests.instructor.second_course import SECOND_COURSE
from tests.instructor.signing_in import add_user, sign_in
from tests.web.html import soup

FEW_PARTITIONS = "designs/bad/few-partitions.yaml"


@pytest.fixture
def second_course_dir(tmp_path):
    """A copy of the second course, safe to edit."""
    return shutil.copytree(SECOND_COURSE, tmp_path / "second_course")


@pytest.fixture
def preview(make_client, make_settings, second_course_dir):
    """Build a client signed in as an instructor of the course copy (Settings overrides)."""

    def build(**overrides):
        client = make_client(steps_dir=second_course_dir, **overrides)
        add_user(make_settings(), "ina@example.com", Role.instructor)
        sign_in(client, "ina@example.com")
        return client

    return build


def verdicts(page) -> list[tuple[str, str]]:
    """(check id, status) of every check in the learner's results block, as it lists them."""
    return [
        (li["id"].removeprefix("check-"), li.select_one(".check-status").get_text(strip=True))
        for li in page.select("#results li.check")
    ]


def test_the_reference_fills_the_learners_form_and_passes_every_check(preview):
    page = soup(preview().get("/instructor/steps/size-the-group"))
    assert page.select_one("h1").get_text(" ", strip=True) == (
        "Step 1 · Size the consumer group for the peak"
    )
    assert (
        page.select_one("article.narrative h2#littles-law").get_text() == "Little’s law"
    )  # smart quotes
    fields = page.select_one("#decisions fieldset.preview-fields")
    assert fields.has_attr("disabled")
    assert fields.select_one("input[name='event_log.partitions']")["value"] == "64"
    checked = fields.select_one("input[name='event_log.partition_key'][checked]")
    assert checked["value"] == "run_id"
    assert page.select_one("#decisions form") is None  # nothing to save from a preview
    assert page.select_one("select#design option[selected]")["value"] == "designs/reference.yaml"
    assert verdicts(page) == [
        ("partitions-cover-in-flight", "Pass"),
        ("slots-cover-partitions", "Pass"),
        ("key-per-order", "Pass"),
        ("peak-keeps-up", "Pass"),
    ]
    verdict = page.select_one(".preview-verdict")
    assert verdict["data-as-intended"] == "yes"
    assert verdict.select_one("strong").get_text() == "10/10 points"


def test_a_known_bad_design_shows_the_checks_it_fails_and_what_the_learner_reads(preview):
    page = soup(
        preview().get("/instructor/steps/size-the-group", params={"design": FEW_PARTITIONS})
    )
    assert page.select_one("input[name='event_log.partitions']")["value"] == "40"
    assert page.select_one("select#design option[selected]")["value"] == FEW_PARTITIONS
    assert verdicts(page) == [  # failed checks first, as the learner reads them
        ("partitions-cover-in-flight", "Fail"),
        ("peak-keeps-up", "Fail"),
        ("slots-cover-partitions", "Pass"),
        ("key-per-order", "Pass"),
    ]
    summary = page.select_one(".preview-verdict")
    assert summary.select_one(".expected").get_text() == "partitions-cover-in-flight, peak-keeps-up"
    assert summary.select_one(".failed").get_text() == "partitions-cover-in-flight, peak-keeps-up"
    failed = page.select_one("#results li#check-partitions-cover-in-flight")
    message = " ".join(failed.select_one(".check-message").get_text().split())
    assert message.startswith("The events in flight needed ")
    assert message.endswith(
        "of the partitions at the peak, more than there are, above the 80 % that leaves a "
        "quarter spare."
    )
    why = " ".join(failed.select_one(".why").get_text(" ", strip=True).split())
    assert why.endswith("that needs 62.5 partitions, and you have 40.")
    assert failed.select_one(".hint").get_text(" ", strip=True).startswith("Hint: Partitions are")
    assert failed.select_one(".concept a")["href"] == "#littles-law"
    assert page.select_one(".preview-verdict")["data-as-intended"] == "yes"
    assert page.select_one(".why-bad").get_text().startswith("40 partitions hold 40 events")


def test_the_chooser_says_which_designs_must_fail_this_step(preview):
    page = soup(preview().get("/instructor/steps/commit-after-work"))
    options = [" ".join(o.get_text().split()) for o in page.select("select#design option")]
    assert options == [
        "reference (must pass)",
        "few-partitions (passes this step)",
        "commit-first (must fail restart-loses-nothing)",
        "no-dedupe (must fail dedupe-durable, warehouse-keyed)",
        "endless-retry (passes this step)",
    ]


def test_a_design_that_is_not_the_courses_own_is_404(preview):
    response = preview().get("/instructor/steps/size-the-group", params={"design": "../x.yaml"})
    assert response.status_code == 404


def test_an_unavailable_step_shows_its_problems_instead_of_a_grade(preview, second_course_dir):
    step = second_course_dir / "03-park-poison-orders" / "step.yaml"
    step.write_text(step.read_text().replace("field: failures.quarantine_per_key", "field: nope"))
    response = preview().get("/instructor/steps/park-poison-orders")
    assert response.status_code == 200
    page = soup(response)
    problems = page.select(".unavailable .problems li")
    assert any("step.yaml" in li.get_text() and "nope" in li.get_text() for li in problems)
    assert "cannot be graded" in page.select_one("#preview-results").get_text()
    assert page.select("#results li.check") == []


def test_in_development_an_edit_shows_on_the_next_request(preview, second_course_dir):
    client = preview(env="development")
    url = "/instructor/steps/park-poison-orders"
    assert "Park the events that never succeed" in soup(client.get(url)).select_one("h1").get_text()
    step = second_course_dir / "03-park-poison-orders" / "step.yaml"
    step.write_text(
        step.read_text().replace(
            "title: Park the events that never succeed", "title: Park the poison orders"
        )
    )
    narrative = second_course_dir / "03-park-poison-orders" / "narrative.md"
    narrative.write_text(
        narrative.read_text() + "\n## Replaying parked events\n\nFix, then replay.\n"
    )
    check = second_course_dir / "03-park-poison-orders" / "step.yaml"
    limit = "expr: metrics.poison_stall_max_s <= 120"
    assert limit in check.read_text()
    check.write_text(check.read_text().replace(limit, "expr: metrics.poison_stall_max_s <= 2"))
    page = soup(client.get(url))
    assert page.select_one("h1").get_text(" ", strip=True) == "Step 3 · Park the poison orders"
    assert page.select_one("h2#replaying-parked-events") is not None
    assert ("retry-limited", "Fail") in verdicts(
        page
    )  # the reference's 5 attempts hold a poison event's partition longer than 2 s


def test_outside_development_the_course_is_read_once(preview, second_course_dir):
    client = preview(env="test")
    url = "/instructor/steps/park-poison-orders"
    client.get(url)
    step = second_course_dir / "03-park-poison-orders" / "step.yaml"
    step.write_text(
        step.read_text().replace(
            "title: Park the events that never succeed", "title: Park the poison orders"
        )
    )
    assert "Park the events that never succeed" in soup(client.get(url)).select_one("h1").get_text()


def test_step_links_stay_in_the_preview_with_the_chosen_design(preview):
    client = preview()
    page = soup(client.get("/instructor/steps/size-the-group", params={"design": FEW_PARTITIONS}))
    assert page.select_one("#rail") is None, "the instructor's own rail is not the learner's"
    after = "/instructor/steps/commit-after-work?design=designs%2Fbad%2Ffew-partitions.yaml"
    assert page.select_one("a[rel=next]")["href"].endswith(after)
    assert page.select_one("#results p.actions a")["href"].endswith(after)
    learner = soup(client.get("/steps/size-the-group"))
    assert learner.select_one("a[rel=next]")["href"].endswith("/steps/commit-after-work")
