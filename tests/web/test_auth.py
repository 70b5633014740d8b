"""Signing in and out with an account made by create_user; instructors see step problems."""

from __future__ import annotations

from app.accounts import create_user
from app.db import make_engine, make_sessionmaker, session_scope
from app.models import Role
from tests.factories import write
from tests.web.html import csrf_of, soup


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
