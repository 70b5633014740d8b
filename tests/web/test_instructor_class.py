"""The class dashboard, one learner's page and the CSV download, read against a class the test
builds (tests/instructor/classroom.py) on the second course."""

from __future__ import annotations

import csv
import io
import re

import pytest
import yaml

from app.designs import save_design
from app.models import Role, User
from simulator.files import load_design
from tests.instructor.classroom import build_class
from tests.instructor.second_course import REFERENCE, SECOND_COURSE
from tests.instructor.signing_in import add_user, in_session, sign_in
from tests.web.html import soup


@pytest.fixture
def classroom(make_client, make_settings):
    """A client signed in as an instructor of the second course, and the class's ids by email."""
    client = make_client(steps_dir=SECOND_COURSE)
    settings = make_settings()
    add_user(settings, "ina@example.com", Role.instructor)
    with in_session(settings) as session:
        ids = build_class(session)
        save_design(
            session,
            ids["ana@example.com"],
            "order-events",
            load_design(SECOND_COURSE / REFERENCE),
            0,
        )
        session.commit()
    sign_in(client, "ina@example.com")
    return client, ids


def cells(page) -> dict[str, list[tuple[str, str]]]:
    """Learner name -> [(status, text)] per step, then the total, from the class table."""
    rows = {}
    for tr in page.select("table.class-table tbody tr"):
        name = tr.select_one("th").get_text(strip=True)
        steps = [
            (
                td["data-status"],
                td.select_one(".points").get_text(strip=True)
                + (
                    " " + td.select_one(".attempts").get_text(strip=True)
                    if td.select_one(".attempts")
                    else ""
                ),
            )
            for td in tr.select("td.cell")
        ]
        rows[name] = [*steps, ("total", tr.select_one("td.total").get_text(strip=True))]
    return rows


def test_the_class_table_shows_status_points_and_attempts_per_learner_and_step(classroom):
    client, _ = classroom
    page = soup(client.get("/instructor"))
    heads = [th.get_text(strip=True) for th in page.select("table.class-table thead th")]
    assert heads == ["Learner", "1", "2", "3", "Total"]
    assert cells(page) == {
        "ana@example.com": [
            ("passed", "10/10 ×2"),
            ("passed", "10/10 ×1"),
            ("failed", "4/10 ×1"),
            ("total", "24/30"),
        ],
        "bo@example.com": [
            ("passed", "10/10 ×1"),
            ("passed", "10/10 ×2"),
            ("not_started", "-"),
            ("total", "20/30"),
        ],
        "cy@example.com": [
            ("failed", "4/10 ×1"),
            ("not_started", "-"),
            ("not_started", "-"),
            ("total", "4/30"),
        ],
        "dee@example.com": [
            ("not_started", "-"),
            ("not_started", "-"),
            ("not_started", "-"),
            ("total", "0/30"),
        ],
    }
    summary = page.select_one("#class-summary").get_text(" ", strip=True)
    assert " ".join(summary.split()) == (
        "4 learners · 3 started · 0 passed every step · 30 points in all"
    )


def test_the_summary_counts_guests_apart(classroom, make_settings):
    client, _ = classroom
    with in_session(make_settings()) as session:
        guest = User(role=Role.learner)
        session.add(guest)
        session.flush()
        save_design(session, guest.id, "order-events", load_design(SECOND_COURSE / REFERENCE), 0)
        session.commit()
    summary = soup(client.get("/instructor")).select_one("#class-summary").get_text(" ", strip=True)
    assert " ".join(summary.split()) == (
        "5 learners (1 guest without an account) · 4 started · 0 passed every step · "
        "30 points in all"
    )


def test_a_cell_says_its_status_in_words_as_well_as_in_colour(classroom):
    client, _ = classroom
    page = soup(client.get("/instructor"))
    first = page.select_one("table.class-table tbody tr td.cell")
    assert "cell-passed" in first["class"]
    assert first["title"] == "Step 1: passed, 2 attempts"
    assert first.select_one(".visually-hidden").get_text() == "passed, 2 attempts"


def test_the_hardest_checks_are_those_most_learners_failed_first_time(classroom):
    client, _ = classroom
    page = soup(client.get("/instructor"))
    rows = [
        (
            tr["data-check"],
            " ".join(tr.select_one(".failed-first").get_text(" ", strip=True).split()),
            tr.select_one(".failed-now").get_text(strip=True),
        )
        for tr in page.select("table.hardest tbody tr")
    ]
    assert rows[:5] == [
        ("size-the-group/partitions-cover-in-flight", "2 of 3 (67 %)", "1"),
        ("size-the-group/peak-keeps-up", "2 of 3 (67 %)", "1"),
        ("park-poison-orders/retry-limited", "1 of 1 (100 %)", "1"),
        ("park-poison-orders/poison-parked", "1 of 1 (100 %)", "1"),
        ("commit-after-work/restart-loses-nothing", "1 of 2 (50 %)", "0"),
    ]
    assert all(first.startswith("0 of") for _, first, _ in rows[5:])
    assert len(rows) == 11  # every check graded for at least one learner
    meter = page.select_one("table.hardest tbody tr meter")
    assert float(meter["value"]) == pytest.approx(2 / 3)


def test_a_learners_page_shows_each_step_its_checks_and_the_design(classroom):
    client, ids = classroom
    page = soup(client.get(f"/instructor/learners/{ids['ana@example.com']}"))
    assert page.select_one("h1").get_text(strip=True) == "ana@example.com"
    steps = {
        tr["data-step"]: (
            tr.select_one("td.cell")["data-status"],
            tr.select_one("td.points").get_text(strip=True),
            tr.select_one("td.attempts").get_text(strip=True),
        )
        for tr in page.select("table.learner-steps tbody tr")
    }
    assert steps == {
        "size-the-group": ("passed", "10/10", "2"),
        "commit-after-work": ("passed", "10/10", "1"),
        "park-poison-orders": ("failed", "4/10", "1"),
    }
    first_row = page.select_one("tr[data-step=size-the-group] li[data-check=peak-keeps-up]")
    assert " ".join(first_row.get_text(" ", strip=True).split()).startswith("fail → pass")
    assert "(no points 1 of 2: failed or not exercised)" in first_row.get_text()
    saved = yaml.safe_load(page.select_one("pre.design-yaml").get_text())
    assert saved["event_log"]["partitions"] == 64


def test_a_learner_who_has_done_nothing_has_a_page_too(classroom):
    client, ids = classroom
    page = soup(client.get(f"/instructor/learners/{ids['dee@example.com']}"))
    assert [td.get_text(strip=True) for td in page.select("td.attempts")] == ["0", "0", "0"]
    assert "No design saved yet." in page.get_text()


def test_an_unknown_learner_is_404(classroom):
    client, _ = classroom
    assert client.get("/instructor/learners/999").status_code == 404


def test_the_csv_has_one_row_per_learner_with_points_total_and_activity(classroom):
    client, ids = classroom
    response = client.get("/instructor/grades.csv")
    assert response.headers["content-type"] == "text/csv; charset=utf-8"
    assert (
        response.headers["content-disposition"] == 'attachment; filename="order-events-grades.csv"'
    )
    rows = list(csv.DictReader(io.StringIO(response.text)))
    points = [
        (
            r["email"],
            r["size-the-group"],
            r["commit-after-work"],
            r["park-poison-orders"],
            r["total"],
            r["max_total"],
        )
        for r in rows
    ]
    assert points == [
        ("ana@example.com", "10", "10", "4", "24", "30"),
        ("bo@example.com", "10", "10", "0", "20", "30"),
        ("cy@example.com", "4", "0", "0", "4", "30"),
        ("dee@example.com", "0", "0", "0", "0", "30"),
    ]
    assert [int(r["learner_id"]) for r in rows] == [ids[r["email"]] for r in rows]
    by_email = {r["email"]: r for r in rows}
    assert (
        by_email["dee@example.com"]["first_activity"],
        by_email["dee@example.com"]["last_activity"],
    ) == ("", "")
    for email in ("ana@example.com", "bo@example.com", "cy@example.com"):
        first, last = by_email[email]["first_activity"], by_email[email]["last_activity"]
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", first), first
        assert first <= last
