"""Signing up keeps the guest's progress; signing in elsewhere resumes it."""

from __future__ import annotations

import pytest

from app.models import DesignRecord, User
from app.web.signup import KEPT
from tests.web.html import csrf_of, soup
from tests.web.learner import rows, step_form, words


def sign_up(client, email: str, password: str = "a long password", **extra):
    token = csrf_of(soup(client.get("/signup")))
    data = {"csrf_token": token, "email": email, "password": password, **extra}
    return client.post("/signup", data=data, follow_redirects=False)


def test_a_guest_who_signs_up_keeps_the_saved_design(course_client, make_settings):
    form = step_form(course_client, "commit-order", event_log__partitions="48")
    assert course_client.post("/steps/commit-order", data=form).status_code == 200
    (guest,) = rows(make_settings(), User)
    assert guest.email is None
    response = sign_up(course_client, "Ana@Example.com")
    assert response.status_code == 303
    (user,) = rows(make_settings(), User)
    assert (user.id, user.email) == (guest.id, "ana@example.com")
    assert user.password_hash.startswith("$argon2id$")
    (record,) = rows(make_settings(), DesignRecord)
    assert record.user_id == user.id
    header = words(soup(course_client.get("/")).select_one("nav.account"))
    assert header.startswith("ana@example.com")


def test_signing_up_from_a_step_comes_back_to_it_and_says_the_work_is_kept(course_client):
    form = step_form(course_client, "commit-order", event_log__partitions="48")
    step = soup(course_client.post("/steps/commit-order", data=form))
    link = step.select_one("#account a[href^='/signup']")["href"]
    assert link == "/signup?next=%2Fsteps%2Fcommit-order"
    page = soup(course_client.get(link))
    assert page.select_one("input[name=next]")["value"] == "/steps/commit-order"
    data = {"csrf_token": csrf_of(page), "email": "bo@example.com", "password": "a long password"}
    response = course_client.post("/signup", data={**data, "next": "/steps/commit-order"})
    assert response.url.path == "/steps/commit-order"
    notice = words(soup(response).select_one(".notice"))
    assert notice == KEPT
    # Somewhere else than this site is never a destination.
    other = course_client.__class__(course_client.app)
    token = csrf_of(soup(other.get("/signup")))
    away = {"csrf_token": token, "email": "cy@example.com", "password": "a long password"}
    response = other.post("/signup", data={**away, "next": "//evil.example/"})
    assert response.url.path == "/"


def test_signing_in_on_another_device_resumes_where_the_learner_was(
    make_client, course_dir, make_settings
):
    laptop = make_client(steps_dir=course_dir)
    form = step_form(laptop, "commit-order", event_log__partitions="48")
    laptop.post("/steps/commit-order", data=form)
    sign_up(laptop, "bo@example.com")
    phone = make_client(steps_dir=course_dir)
    token = csrf_of(soup(phone.get("/login")))
    phone.post("/login", data={"csrf_token": token, "email": "bo@example.com",
                               "password": "a long password"})  # fmt: skip
    overview = soup(phone.get("/"))
    assert overview.select_one("a.button.primary").get_text(strip=True) == "Continue at step 1"
    step = soup(phone.get("/steps/commit-order"))
    assert step.select_one("input[name='event_log.partitions']")["value"] == "48"


@pytest.mark.parametrize(
    ("email", "password", "field", "message"),
    [
        ("not-an-email", "a long password", "email", "Enter an email address"),
        ("@evil", "a long password", "email", "Enter an email address"),
        ("ana@evil", "a long password", "email", "Enter an email address"),
        ('=HYPERLINK("http://x.example")@example.com', "a long password", "email", "Enter an"),
        ("=cmd|' /C calc'!A0@example.com", "a long password", "email", "Enter an email address"),
        ("cy@example.com", "short", "password", "Use at least 10 characters."),
    ],
)
def test_a_mistake_is_named_at_its_field_and_the_email_kept(
    course_client, email, password, field, message
):
    response = sign_up(course_client, email, password)
    assert response.status_code == 422
    page = soup(response)
    assert page.select_one(f"#{field}-error").get_text().startswith(message)
    assert page.select_one("input#email")["value"] == email
    assert page.select_one(f"input#{field}")["aria-invalid"] == "true"


def test_an_email_with_an_account_is_refused(course_client):
    assert sign_up(course_client, "dee@example.com").status_code == 303
    course_client.cookies.clear()
    response = sign_up(course_client, "DEE@example.com")
    assert response.status_code == 422
    assert "exists" in soup(response).select_one("#email-error").get_text()


def test_an_address_that_is_not_valid_is_refused_with_the_reason(course_client):
    response = sign_up(course_client, "@evil")
    assert response.status_code == 422
    reason = soup(response).select_one("#email-error").get_text()
    assert "There must be something before the @-sign." in reason


def test_jose_precomposed_and_decomposed_make_one_account(course_client):
    assert sign_up(course_client, "Jos\u00e9@Example.com").status_code == 303
    course_client.cookies.clear()
    response = sign_up(course_client, "jose\u0301@example.com")
    assert response.status_code == 422
    assert "exists" in soup(response).select_one("#email-error").get_text()
