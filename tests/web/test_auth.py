"""Signing in and out with an account made by create_user; instructors see step problems; a
guest signing in brings its work to an account without any, else is told it was not merged."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.accounts import create_user
from app.db import make_engine, make_sessionmaker, session_scope
from app.models import CheckOutcome, DesignRecord, Role, StepProgress, StepStatus, User
from app.web.auth import NOT_MERGED
from tests.factories import write
from tests.web.html import csrf_of, soup
from tests.web.learner import HX, rows, step_form, words
from tests.web.learner_course import write_learner_course


def add_user(settings, email: str, role: Role) -> None:
    for session in session_scope(make_sessionmaker(make_engine(settings.database_url))):
        create_user(session, email, role, "a long password")


def sign_in(client, email: str, password: str = "a long password"):
    token = csrf_of(soup(client.get("/login")))
    return client.post(
        "/login",
        data={"csrf_token": token, "email": email, "password": password},
        follow_redirects=False,
    )


def test_sign_in_then_sign_out(course_client, make_settings):
    add_user(make_settings(), "ana@example.com", Role.learner)
    response = sign_in(course_client, "ana@example.com")
    assert response.status_code == 303
    page = soup(course_client.get("/"))
    assert page.select_one("nav.account span").get_text(strip=True) == "ana@example.com"
    logout = course_client.post(
        "/logout", data={"csrf_token": csrf_of(page)}, follow_redirects=False
    )
    assert logout.status_code == 303
    assert soup(course_client.get("/")).select_one("nav.account a").get_text() == "Sign in"


def test_a_wrong_password_is_401_with_the_form_again(course_client, make_settings):
    add_user(make_settings(), "bo@example.com", Role.learner)
    response = sign_in(course_client, "bo@example.com", "not the password")
    assert response.status_code == 401
    page = soup(response)
    assert page.select_one("p.error").get_text().startswith("That email and password")
    assert page.select_one("input#email")["value"] == "bo@example.com"


def test_an_instructor_sees_why_a_step_is_unavailable(make_client, make_settings, course_dir):
    write(course_dir / "02-event-log" / "step.yaml", "id: event-log\nminutes: 0\n")
    client = make_client(steps_dir=course_dir)
    add_user(make_settings(), "ina@example.com", Role.instructor)
    assert soup(client.get("/steps/event-log")).select_one(".unavailable .problems") is None
    sign_in(client, "ina@example.com")
    problems = soup(client.get("/steps/event-log")).select(".unavailable .problems li")
    texts = sorted(li.get_text(" ", strip=True) for li in problems)
    assert len(texts) == 3  # minutes, title, summary
    assert any("step.yaml:2" in t and "minutes" in t for t in texts)


@pytest.fixture
def learner_dir(tmp_path: Path) -> Path:
    return write_learner_course(tmp_path / "course")


def run_event_log(client, partitions: str) -> None:
    """Save and run step 2 (``event-log``) with in-memory dedupe: 3/5 at >= 24 partitions."""
    form = step_form(
        client, "event-log", event_log__partitions=partitions, delivery__dedupe="in_memory"
    )
    assert client.post("/steps/event-log/run", data=form, headers=HX).status_code == 200


def notice_of(page) -> str | None:
    notice = page.select_one("main > p.notice[role=status]")
    return words(notice) if notice is not None else None


def test_a_guest_signing_in_to_an_account_without_work_brings_design_progress_and_checks(
    make_client, learner_dir, make_settings
):
    client = make_client(steps_dir=learner_dir)
    run_event_log(client, "30")
    (guest,) = rows(make_settings(), User)
    add_user(make_settings(), "ana@example.com", Role.learner)

    assert sign_in(client, "ana@example.com").status_code == 303

    (account,) = rows(make_settings(), User)
    assert account.email == "ana@example.com" and account.id != guest.id
    (record,) = rows(make_settings(), DesignRecord)
    assert record.user_id == account.id and "partitions: 30" in record.yaml_text
    (progress,) = rows(make_settings(), StepProgress)
    assert (progress.user_id, progress.step_id, progress.status, progress.points) == (
        account.id,
        "event-log",
        StepStatus.failed,
        3,
    )
    outcomes = {
        (o.user_id, o.check_id, o.first_status) for o in rows(make_settings(), CheckOutcome)
    }
    assert outcomes == {
        (account.id, "enough-partitions", "pass"),
        (account.id, "durable-dedupe", "fail"),
    }
    page = soup(client.get("/steps/event-log"))
    assert page.select_one("input[name='event_log.partitions']")["value"] == "30"
    assert words(page.select_one("#account span")) == "ana@example.com"
    assert notice_of(page) is None


def test_a_guest_signing_in_to_an_account_with_a_design_keeps_the_accounts_and_is_told_once(
    make_client, learner_dir, make_settings
):
    laptop = make_client(steps_dir=learner_dir)  # migrates the database
    add_user(make_settings(), "bo@example.com", Role.learner)
    sign_in(laptop, "bo@example.com")
    run_event_log(laptop, "48")
    browser = make_client(steps_dir=learner_dir)
    run_event_log(browser, "30")

    response = sign_in(browser, "bo@example.com")

    assert response.status_code == 303
    users = {u.email: u.id for u in rows(make_settings(), User)}
    assert set(users) == {"bo@example.com", None}, "the guest's work is left on its own row"
    designs = {r.user_id: r.yaml_text for r in rows(make_settings(), DesignRecord)}
    assert "partitions: 48" in designs[users["bo@example.com"]]
    assert "partitions: 30" in designs[users[None]]
    outcomes = {o.user_id for o in rows(make_settings(), CheckOutcome)}
    assert outcomes == {users["bo@example.com"], users[None]}
    first = soup(browser.get(response.headers["location"]))
    assert notice_of(first) == NOT_MERGED
    assert "not merged" in NOT_MERGED and "download design.yaml" in NOT_MERGED
    step = soup(browser.get("/steps/event-log"))
    assert notice_of(step) is None, "the message shows once"
    assert step.select_one("input[name='event_log.partitions']")["value"] == "48"


def test_a_guest_with_a_wrong_password_stays_the_guest_with_its_work(
    make_client, learner_dir, make_settings
):
    client = make_client(steps_dir=learner_dir)
    run_event_log(client, "30")
    (guest,) = rows(make_settings(), User)
    add_user(make_settings(), "cy@example.com", Role.learner)

    response = sign_in(client, "cy@example.com", "not the password")

    assert response.status_code == 401
    (record,) = rows(make_settings(), DesignRecord)
    assert record.user_id == guest.id
    assert len(rows(make_settings(), User)) == 2
    page = soup(client.get("/steps/event-log"))
    assert words(page.select_one("#account span")) == "Progress kept in this browser"
    assert page.select_one("input[name='event_log.partitions']")["value"] == "30"
