"""Who may use each route, tested for every route the app serves (so a new route is covered the
day it is added): instructor pages send anonymous visitors and guest learners (no account) to
sign in, refuse learners (403) and serve instructors; every other route refuses nobody.

The JSON API is open by design (CI pipelines grade without an account) and rate limited.
"""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.models import User
from tests.security.conftest import PASSWORD, REPO, ROLES
from tests.security.routes import ROUTES, concrete, needs_instructor

REFERENCE = REPO / "steps" / "designs" / "reference.yaml"


def refused(response) -> bool:
    """401 or 403, or a redirect to the sign-in page."""
    if response.status_code in (401, 403):
        return True
    return response.status_code in (302, 303, 307) and "/login" in response.headers["location"]


def samples(app) -> dict[str, str]:
    with app.state.sessionmaker() as session:
        learner = session.scalar(select(User).where(User.email == "learner@example.com"))
    return {"slug": "run-api", "user_id": str(learner.id)}


def request_for(path: str, client) -> dict[str, object]:
    """A form that passes CSRF; sign-in and sign-up get credentials that work, the design upload
    gets a design."""
    form = {"csrf_token": client.csrf}
    if path == "/login":
        form |= {"email": "learner@example.com", "password": PASSWORD}
    if path == "/signup":
        form |= {"email": f"new-{id(client)}@example.com", "password": PASSWORD}
    if path == "/design":
        return {"data": form, "files": {"design": ("design.yaml", REFERENCE.read_bytes())}}
    return {"data": form}


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize(("method", "path", "name"), ROUTES, ids=[f"{m} {p}" for m, p, _ in ROUTES])
def test_each_route_serves_exactly_the_roles_it_should(app, client_as, method, path, name, role):
    try:
        url = concrete(path, samples(app))
    except KeyError as exc:
        pytest.fail(f"route {name} ({path}) has a parameter without a sample value: {exc}")
    client = client_as(role)
    response = (
        client.get(url)
        if method == "GET"
        else client.request(method, url, **request_for(path, client))
    )
    expect_refusal = needs_instructor(path) and role != "instructor"
    assert refused(response) == expect_refusal, (
        f"{role} {method} {url}: {response.status_code} {response.text[:200]}"
    )
    if expect_refusal and role in ("anonymous", "guest"):
        assert response.status_code in (303, 401)
    elif expect_refusal:
        assert response.status_code == 403


def test_the_route_table_is_not_empty_and_has_instructor_pages():
    """Guards the test above against an empty or unprotected route list."""
    assert len(ROUTES) > 10
    assert any(needs_instructor(path) for _, path, _ in ROUTES)


@pytest.mark.parametrize("role", ROLES)
def test_static_files_are_public(client_as, role):
    assert client_as(role).get("/static/css/designlab.css").status_code == 200
