"""Issue 16, case 12: a control character (a NUL byte above all, which PostgreSQL cannot store
in a text column: psycopg.DataError, a 500) in any text field of any form is refused up front
with 422 naming the field, and nothing is saved."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.models import DesignRecord, User
from tests.web.html import csrf_of, soup
from tests.web.learner import HX, rows, step_form
from tests.web.learner_course import write_learner_course


@pytest.mark.parametrize("character", ["\x00", "\x01", "\x1b", "\x7f", "\x85"])
@pytest.mark.parametrize("path", ["/signup", "/login"])
def test_case12_a_control_character_in_the_email_is_422_and_makes_no_account(
    course_client, make_settings, path, character
):
    token = csrf_of(soup(course_client.get(path)))
    data = {"csrf_token": token, "email": f"ana{character}@example.com",
            "password": "a long password"}  # fmt: skip
    response = course_client.post(path, data=data)
    assert response.status_code == 422
    assert "The field email holds a control character" in response.text
    assert f"U+{ord(character):04X}" in response.text
    assert rows(make_settings(), User) == []


def test_case12_a_nul_in_a_step_field_is_422_naming_the_field_and_saves_nothing(
    make_client, make_settings, tmp_path: Path
):
    client = make_client(steps_dir=write_learner_course(tmp_path / "course"))
    form = step_form(client, "event-log", event_log__partitions="30\x00")
    response = client.post("/steps/event-log/run", data=form, headers=HX)
    assert response.status_code == 422
    assert "event_log.partitions" in response.text and "U+0000" in response.text
    assert rows(make_settings(), DesignRecord) == []


def test_case12_a_control_character_in_a_field_name_is_refused(course_client):
    token = csrf_of(soup(course_client.get("/signup")))
    data = {"csrf_token": token, "email": "ana@example.com", "password": "a long password",
            "note\x00": "x"}  # fmt: skip
    response = course_client.post("/signup", data=data, headers={"accept": "application/json"})
    assert response.status_code == 422
    assert response.json()["error"]["fields"][0]["field"] == repr("note\x00")


def test_tab_and_line_breaks_are_not_control_characters_for_a_form(course_client):
    token = csrf_of(soup(course_client.get("/signup")))
    data = {"csrf_token": token, "email": "ana@example.com", "password": "a long\tpassword\r\n"}
    assert course_client.post("/signup", data=data, follow_redirects=False).status_code == 303
