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


@pytest.fixture
def live(make_client, make_settings, course_dir):
    """A learner's and an instructor's client of an instance that reloads the course when its
    files change (as with STEPS_DIR on a development instance)."""
    learner = make_client(steps_dir=course_dir, env="development")
    assert learner.get("/steps/event-log").status_code == 200
    teacher = make_client(steps_dir=course_dir, env="development")
    add_user(make_settings(), "ina@example.com", Role.instructor)
    sign_in(teacher, "ina@example.com")
    return learner, teacher


def edit_check(course_dir: Path, old: str, new: str) -> None:
    """The instructor edits step 2's step.yaml while the course is live."""
    step_file = course_dir / "02-event-log" / "step.yaml"
    text = step_file.read_text()
    assert old in text
    step_file.write_text(text.replace(old, new))


def every_view(learner, teacher) -> dict[str, str]:
    """Step 2 and the score as every page says them: the learner's overview badge, rail, step
    page verdict, report card and score so far; the class page and the CSV."""
    step = soup(learner.get("/steps/event-log"))
    verdict = step.select_one("#results .verdict strong")
    (row,) = soup(teacher.get("/instructor")).select("table.class-table tbody tr")
    cell = row.select("td.cell")[1]
    line = teacher.get("/instructor/grades.csv").text.splitlines()[1].split(",")
    return {
        "overview": words(soup(learner.get("/")).select_one("li[data-step='event-log'] .badge")),
        "rail": step.select_one("#rail li:nth-of-type(2) a")["aria-label"].split(", ", 1)[1],
        "step": words(verdict) if verdict else words(step.select_one("#results .notice")),
        "report": words(
            soup(learner.get("/report")).select_one("tr[data-step='event-log'] .your-run")
        ),
        "score": words(step.select_one("#rail p.score strong")),
        "class": f"{cell['data-status']} {words(cell.select_one('.points'))}",
        "class total": words(row.select_one("td.total")),
        "csv": f"step {line[3]}, total {line[5]}/{line[6]}, to re-run {line[10]}",
    }


def test_a_check_edited_after_a_run_shows_the_stored_verdict_marked_stale_on_every_page(
    live, course_dir
):
    learner, teacher = live
    run = step_form(learner, "event-log", event_log__partitions="12", delivery__dedupe=DURABLE)
    assert learner.post("/steps/event-log/run", data=run, headers=HX).status_code == 200
    ran = {
        "overview": "2/5, try again",
        "rail": "2/5, try again",
        "step": "2/5 points",
        "report": "2/5, try again",
        "score": "2/7",
        "class": "failed 2/5",
        "class total": "2/7",
        "csv": "step 2, total 2/7, to re-run 0",
    }
    assert every_view(learner, teacher) == ran

    # The instructor makes the failed check pass for 12 partitions: the run was judged by a
    # check the course no longer has. No page re-judges it (the step page used to show 5/5 and a
    # pass beside 2/5 everywhere else); each shows the stored 2/5, set aside until a re-run.
    edit_check(course_dir, "partitions >= 24", "partitions >= 8")
    stale = every_view(learner, teacher)
    assert stale.pop("step").startswith(
        "This step's checks changed since your last run, which scored 2/5 under the checks as "
        "they were then. That verdict no longer counts in your score: run the step again"
    )
    assert stale == {
        "overview": "needs re-run: its checks changed",
        "rail": "needs re-run: its checks changed",
        "report": "needs re-run: its checks changed",
        "score": "0/7",
        "class": "needs_rerun 2/5",
        "class total": "0/7 (1 to re-run)",
        "csv": "step 2, total 0/7, to re-run 1",
    }

    # Undoing the edit makes the run stand again, everywhere.
    edit_check(course_dir, "partitions >= 8", "partitions >= 24")
    assert every_view(learner, teacher) == ran

    # Run again under the edited check: judged by it, on every page.
    edit_check(course_dir, "partitions >= 24", "partitions >= 8")
    run = step_form(learner, "event-log")
    assert learner.post("/steps/event-log/run", data=run, headers=HX).status_code == 200
    assert every_view(learner, teacher) == {
        "overview": "done 5/5",
        "rail": "done 5/5",
        "step": "5/5 points",
        "report": "done 5/5",
        "score": "5/7",
        "class": "passed 5/5",
        "class total": "5/7",
        "csv": "step 5, total 5/7, to re-run 0",
    }


def test_a_typo_in_a_run_step_makes_it_unavailable_keeping_its_run_and_the_courses_points(
    live, course_dir
):
    learner, teacher = live
    run = step_form(learner, "event-log", event_log__partitions="12", delivery__dedupe=DURABLE)
    assert learner.post("/steps/event-log/run", data=run, headers=HX).status_code == 200
    edit_check(course_dir, "title: The event log\n", "title: [The event log\n")

    response = learner.get("/steps/event-log")
    assert response.status_code == 503
    page = soup(response)
    text = words(page.select_one("#step"))
    assert "because of an error in the course's files, not in your design" in text
    assert words(page.select_one("#unavailable-run")) == (
        "Your last run of it scored 2/5 and still counts in your score so far."
    )
    assert "No load yet" not in text  # it runs the crash scenario; nothing runs while it is down
    assert words(page.select_one("#rail p.score")).startswith(
        "score so far 2/7 · 1 step unavailable"
    )
    badge = soup(learner.get("/")).select_one("li[data-step='event-log'] .badge")
    assert words(badge) == "unavailable (course error), last run 2/5"
    (row,) = soup(teacher.get("/instructor")).select("table.class-table tbody tr")
    assert words(row.select_one("td.total")) == "2/7"
    assert row.select("td.cell")[1].get("data-unavailable") == "true"

    health = learner.get("/healthz")
    assert health.status_code == 200  # the other steps serve
    assert health.json()["course"] == {
        "status": "degraded",
        "steps": 3,
        "unavailable_steps": ["event-log"],
        "errors": 1,
    }
