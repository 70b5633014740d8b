"""Rate limits: sign-in per client address, grading and simulation per learner (else per address);
over the limit the answer is 429 with Retry-After, in the app's error format."""

from __future__ import annotations

import pytest
from fastapi.routing import iter_route_contexts

from app.main import create_app
from app.middleware.rate_limit import _key, rules_from
from app.models import Role
from tests.instructor.signing_in import add_user, sign_in
from tests.web.html import csrf_of, soup
from tests.web.learner import HX, step_form
from tests.web.learner_course import write_learner_course

DESIGN_YAML = {"content": b"version: 1\n", "headers": {"content-type": "application/yaml"}}


def test_every_rule_names_a_route_of_the_app(make_settings):
    """A renamed route must not silently lose its limit."""
    app = create_app(make_settings())
    routes = {(r.name, m) for r in iter_route_contexts(app.routes) for m in r.methods or ()}
    for rule in rules_from(make_settings()):
        assert (rule.route, rule.method) in routes, rule


def test_sign_in_is_limited_per_client_address(make_client):
    client = make_client(rate_limit_sign_in="3/minute")
    token = csrf_of(soup(client.get("/login")))
    form = {"csrf_token": token, "email": "no@example.com", "password": "wrong password"}
    statuses = [client.post("/login", data=form).status_code for _ in range(4)]
    assert statuses == [401, 401, 401, 429]
    refused = client.post("/login", data=form)
    assert refused.status_code == 429
    assert 1 <= int(refused.headers["retry-after"]) <= 60
    assert "Too many sign-in requests" in soup(refused).get_text()


def test_the_api_is_limited_per_client_address_with_a_json_429(make_client):
    client = make_client(rate_limit_simulate="2/minute")
    statuses = [
        client.post("/api/v1/simulate?scenario=no-such", **DESIGN_YAML).status_code
        for _ in range(3)
    ]
    assert statuses == [404, 404, 429]
    body = client.post("/api/v1/simulate?scenario=no-such", **DESIGN_YAML).json()
    assert body["error"]["status"] == 429
    assert "at most 2 per 1 minute" in body["error"]["detail"]


def test_grading_has_its_own_budget(make_client):
    client = make_client(rate_limit_grade="1/minute", rate_limit_simulate="1/minute")
    grade = {"content": b"version: [", "headers": {"content-type": "application/yaml"}}
    assert client.post("/api/v1/grade", **grade).status_code == 422
    assert client.post("/api/v1/simulate?scenario=no-such", **DESIGN_YAML).status_code == 404
    assert client.post("/api/v1/grade", **grade).status_code == 429


def test_pages_are_not_limited(make_client):
    client = make_client(rate_limit_sign_in="1/minute", rate_limit_grade="1/minute")
    assert {client.get("/login").status_code for _ in range(5)} == {200}


@pytest.mark.parametrize(
    ("scope", "key"),
    [
        ({"session": {"user_id": 7, "guest": False}, "client": ("10.0.0.1", 5)}, "user:7"),
        ({"session": {"user_id": 7, "guest": True}, "client": ("10.0.0.1", 5)}, "address:10.0.0.1"),
        ({"session": {"user_id": 7}, "client": ("10.0.0.1", 5)}, "address:10.0.0.1"),
        ({"session": {}, "client": ("10.0.0.1", 5)}, "address:10.0.0.1"),
        ({"client": ("10.0.0.2", 5)}, "address:10.0.0.2"),
        ({"session": {"user_id": "7"}, "client": None}, "address:unknown"),
    ],
)
def test_learner_rules_count_per_account_else_per_address(scope, key):
    assert _key(scope, "learner") == key


def test_address_rules_ignore_the_session_user():
    assert _key({"session": {"user_id": 7}, "client": ("10.0.0.1", 5)}, "address") == (
        "address:10.0.0.1"
    )


def test_the_simulation_limit_holds_across_guest_creation(make_client, tmp_path):
    """Each visitor's first run makes a guest learner; the guests of one address share its
    budget, so fresh cookies bring no fresh runs (3 runs each by 2 visitors at 2/minute)."""
    client = make_client(
        steps_dir=write_learner_course(tmp_path / "course"), rate_limit_simulate="2/minute"
    )
    statuses = []
    for _ in range(2):
        client.cookies.clear()  # a new visitor: no session, so a new guest on its first run
        for _ in range(3):
            form = step_form(client, "event-log", event_log__partitions="32")
            statuses.append(client.post("/steps/event-log/run", data=form, headers=HX).status_code)
    assert statuses == [200, 200, 429, 429, 429, 429]


def test_a_signed_in_account_has_its_own_simulation_budget(make_client, make_settings, tmp_path):
    client = make_client(
        steps_dir=write_learner_course(tmp_path / "course"), rate_limit_simulate="1/minute"
    )
    form = step_form(client, "event-log", event_log__partitions="32")
    assert client.post("/steps/event-log/run", data=form, headers=HX).status_code == 200
    add_user(make_settings(), "ana@example.com", Role.learner)
    sign_in(client, "ana@example.com")
    form = step_form(client, "event-log", event_log__partitions="32")
    assert client.post("/steps/event-log/run", data=form, headers=HX).status_code == 200
    form = step_form(client, "event-log", event_log__partitions="32")
    assert client.post("/steps/event-log/run", data=form, headers=HX).status_code == 429
