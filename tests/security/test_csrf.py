"""CSRF on every form: each route that takes a POST (or another unsafe method) refuses a request
without the session's token (403) and serves the same request with it. Listed from the app's
routes, so a new form is covered the day it is added.

Exempt, each for a stated reason that a test below checks:
- the JSON API (``/api/...``): it reads no cookie, so a forged cross-site request carries no
  authority; and
- the live estimate: it computes figures from the submitted form and saves nothing.
"""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from app.models import DesignRecord, StepProgress, User
from tests.security.conftest import PASSWORD, REPO
from tests.security.routes import ROUTES, concrete, needs_instructor

UNSAFE = {"POST", "PUT", "PATCH", "DELETE"}
EXEMPT = {"estimate": "computes the live estimate from the submitted form; saves nothing"}
FORMS = [
    (method, path, name)
    for method, path, name in ROUTES
    if method in UNSAFE and not path.startswith("/api/") and name not in EXEMPT
]
SAMPLES = {"slug": "run-api", "user_id": "1"}


REFERENCE = REPO / "steps" / "designs" / "reference.yaml"


def fields_for(path: str) -> dict[str, str]:
    if path in ("/login", "/signup"):
        return {"email": "learner@example.com", "password": PASSWORD}
    return {"design_version": "0"}


def files_for(path: str) -> dict[str, tuple[str, bytes]] | None:
    return {"design": ("design.yaml", REFERENCE.read_bytes())} if path == "/design" else None


@pytest.mark.parametrize(("method", "path", "name"), FORMS, ids=[f"{m} {p}" for m, p, _ in FORMS])
def test_a_form_without_the_session_token_is_refused(client_as, method, path, name):
    client = client_as("instructor" if needs_instructor(path) else "learner")
    url = concrete(path, SAMPLES)
    files = files_for(path)
    missing = client.request(method, url, data=fields_for(path), files=files)
    assert missing.status_code == 403, f"{method} {url} without a token: {missing.status_code}"
    forged = {**fields_for(path), "csrf_token": "forged"}
    assert client.request(method, url, data=forged, files=files).status_code == 403
    sent = {**fields_for(path), "csrf_token": client.csrf}
    with_token = client.request(method, url, data=sent, files=files)
    assert with_token.status_code != 403, f"{method} {url} with the token was refused"


def test_every_state_changing_page_route_is_checked():
    """Guards the test above: the sign-in, sign-up, save and run forms are among those checked."""
    names = {name for _, _, name in FORMS}
    assert {"login", "signup", "save_decisions", "run_step", "logout"} <= names


def test_the_api_reads_no_session(client_as, app):
    """A cross-site request to the API carries the victim's cookie but gains nothing from it: the
    answer is the same with and without a signed-in session."""
    design = {"content": b"version: 1\n", "headers": {"content-type": "application/yaml"}}
    signed_in = client_as("learner").post("/api/v1/grade", **design)
    anonymous = client_as("anonymous").post("/api/v1/grade", **design)
    assert signed_in.status_code == anonymous.status_code == 200
    assert signed_in.json() == anonymous.json()


def test_the_live_estimate_saves_nothing(client_as, app):
    def counts() -> tuple[int, int, int]:
        with app.state.sessionmaker() as session:
            return tuple(  # type: ignore[return-value]
                session.scalar(select(func.count()).select_from(model))
                for model in (User, DesignRecord, StepProgress)
            )

    client = client_as("anonymous")
    before = counts()
    response = client.post("/steps/run-api/estimate", data={"api.start_status_code": "202"})
    assert response.status_code == 200
    assert counts() == before
