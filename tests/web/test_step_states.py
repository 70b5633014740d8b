"""One truth for the learner: the rail, the overview, the step page, the report card and the
instructor's class page say the same state for a step, and a re-run mark follows the values that
feed the step (app.progress.step_standing)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import delete

from app import sim_cache
from app.db import make_engine, make_sessionmaker
from app.models import Role, SimResult
from tests.factories import write
from tests.instructor.signing_in import add_user, sign_in
from tests.web.html import soup
from tests.web.learner import HX, step_form, words
from tests.web.learner_course import write_learner_course

DURABLE = "durable_same_transaction"

RETRY_STEP = """\
id: worker-crash
title: A worker crash
summary: Retry a failed model call.
decisions:
  - field: model.retry.max_attempts
    label: Model call attempts
    widget: number
    min: 1
    max: 10
"""


@pytest.fixture
def course_dir(tmp_path: Path) -> Path:
    """The learner course, its step 3 deciding a value no earlier step decides."""
    root = write_learner_course(tmp_path / "course")
    write(root / "03-worker-crash" / "step.yaml", RETRY_STEP)
    return root


@pytest.fixture
def learner(make_client, course_dir):
    client = make_client(steps_dir=course_dir)
    assert client.get("/steps/event-log").status_code == 200
    return client


def save(client, slug: str, **values: str) -> None:
    response = client.post(f"/steps/{slug}", data=step_form(client, slug, **values), headers=HX)
    assert response.status_code == 200, response.text


def states(client, instructor, slug: str, number: int) -> dict[str, str]:
    """The step's state as each page says it."""
    rail = soup(client.get("/")).select_one(f"li[data-step='{slug}'] .badge")
    step = soup(client.get(f"/steps/{slug}"))
    glyph = step.select_one(f"#rail li:nth-of-type({number}) a")["aria-label"]
    report = soup(client.get("/report")).select_one(f"tr[data-step='{slug}'] .your-run")
    (row,) = soup(instructor.get("/instructor")).select("table.class-table tbody tr")
    cell = row.select("td.cell")[number - 1]
    return {
        "overview": words(rail),
        "rail": glyph.split(", ", 1)[1],
        "report": words(report),
        "class": cell["data-status"],
    }


@pytest.fixture
def instructor(make_client, make_settings, course_dir):
    client = make_client(steps_dir=course_dir)
    add_user(make_settings(), "ina@example.com", Role.instructor)
    sign_in(client, "ina@example.com")
    return client


def test_partitions_96_then_97_then_96_leave_the_run_standing_on_every_page(learner, instructor):
    run = step_form(learner, "event-log", event_log__partitions="96", delivery__dedupe=DURABLE)
    assert learner.post("/steps/event-log/run", data=run, headers=HX).status_code == 200
    done = {"overview": "done 5/5", "rail": "done 5/5", "report": "done 5/5", "class": "passed"}
    assert states(learner, instructor, "event-log", 2) == done
    save(learner, "event-log", event_log__partitions="97")
    assert states(learner, instructor, "event-log", 2) == {
        "overview": "needs re-run",
        "rail": "needs re-run",
        "report": "needs re-run",
        "class": "needs_rerun",
    }
    save(learner, "event-log", event_log__partitions="96")
    assert states(learner, instructor, "event-log", 2) == done
    page = soup(learner.get("/steps/event-log"))
    assert page.select_one("#results ol.checks") is not None
    assert page.select_one("#results .notice") is None
    score = words(page.select_one("#rail p.score"))
    assert score.startswith("score so far 5/") and "re-run" not in score


def forget_simulations(settings) -> None:
    """Empty the simulation cache: its table and this process's recent results."""
    factory = make_sessionmaker(make_engine(settings.database_url))
    with factory() as session:
        session.execute(delete(SimResult))
        session.commit()
    with sim_cache._recent_lock:
        sim_cache._recent.clear()


def test_a_later_steps_decision_leaves_an_earlier_run_standing_on_every_page(
    learner, instructor, make_settings
):
    run = step_form(learner, "event-log", event_log__partitions="32", delivery__dedupe=DURABLE)
    assert learner.post("/steps/event-log/run", data=run, headers=HX).status_code == 200
    save(learner, "worker-crash", model__retry__max_attempts="5")
    # Step 2 simulates its step design, which takes step 3's value from the reference design:
    # the later decision leaves it as it ran, so the page shows that run's results, no note.
    page = soup(learner.get("/steps/event-log"))
    assert page.select_one("#results ol.checks") is not None
    assert page.select_one("#results .notice") is None
    assert page.select_one("#uncounted-note") is None
    done = {"overview": "done 5/5", "rail": "done 5/5", "report": "done 5/5", "class": "passed"}
    assert states(learner, instructor, "event-log", 2) == done
    # With its simulation no longer cached, the page says the run still stands, not that its
    # decisions changed.
    forget_simulations(make_settings())
    note = words(soup(learner.get("/steps/event-log")).select_one("#results .notice"))
    assert "changed since your last run" not in note
    assert note.startswith("Your last run of this step still counts: 5/5 points")
    assert states(learner, instructor, "event-log", 2) == done
