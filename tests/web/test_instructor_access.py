"""Every route under /instructor: anonymous visitors go to sign in, learners get 403, instructors
get the page. The routes are read from the app, so a new instructor route is tested too."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from fastapi.routing import iter_route_contexts
from typer.testing import CliRunner

from app.cli import main
from app.main import create_app
from app.models import Role
from app.settings import Settings, get_settings
from tests.instructor.second_course import SECOND_COURSE
from tests.instructor.signing_in import add_user, sign_in
from tests.web.html import csrf_of, soup


def instructor_routes() -> list[tuple[str, str]]:
    """(path, method) of every route of the app under /instructor, HEAD left out."""
    unused = Path(tempfile.gettempdir()) / "designlab-routes.sqlite3"  # never connected to
    settings = Settings(
        _env_file=None, env="test", secret_key="x" * 32, database_url=f"sqlite:///{unused}"
    )
    app = create_app(settings)
    found = set()
    for route in iter_route_contexts(app.routes):
        path = route.path or ""
        if path == "/instructor" or path.startswith("/instructor/"):
            found |= {(path, m) for m in getattr(route, "methods", None) or () if m != "HEAD"}
    return sorted(found)


ROUTES = instructor_routes()
SAMPLES = {"slug": "commit-after-work", "user_id": None}
"""A value for each path parameter of an instructor route (user_id: the test's learner)."""


def url_of(path: str, learner_id: int) -> str:
    """``path`` with its parameters filled in from SAMPLES."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in SAMPLES:
            pytest.fail(f"{path}: add a sample value for {{{name}}} to SAMPLES")
        return str(learner_id if name == "user_id" else SAMPLES[name])

    return re.sub(r"\{(\w+)(?::\w+)?\}", value, path)


@pytest.fixture
def app(make_client, make_settings):
    """A client of the second course with a learner and an instructor; the learner's id."""
    client = make_client(steps_dir=SECOND_COURSE)
    settings = make_settings()
    learner_id = add_user(settings, "lea@example.com", Role.learner)
    add_user(settings, "ina@example.com", Role.instructor)
    return client, learner_id


def test_the_app_has_the_instructor_routes():
    assert ROUTES == [
        ("/instructor", "GET"),
        ("/instructor/grades.csv", "GET"),
        ("/instructor/health", "GET"),
        ("/instructor/health/self-test", "POST"),
        ("/instructor/learners/{user_id}", "GET"),
        ("/instructor/steps/{slug}", "GET"),
    ]


@pytest.mark.parametrize(("path", "method"), ROUTES)
def test_an_anonymous_visitor_is_sent_to_sign_in(app, path, method):
    client, learner_id = app
    url = url_of(path, learner_id)
    response = client.request(method, url, follow_redirects=False)
    assert response.status_code == 303, response.text
    location = urlsplit(response.headers["location"])
    assert (location.path, location.query) == ("/login", f"next={url.replace('/', '%2F')}")


@pytest.mark.parametrize(("path", "method"), ROUTES)
def test_an_anonymous_htmx_request_is_redirected_by_htmx(app, path, method):
    client, learner_id = app
    url = url_of(path, learner_id)
    response = client.request(method, url, headers={"HX-Request": "true"}, follow_redirects=False)
    assert response.status_code == 200
    assert response.headers["HX-Redirect"].endswith("/login?next=" + url.replace("/", "%2F"))


@pytest.mark.parametrize(("path", "method"), ROUTES)
def test_a_learner_is_refused_with_403(app, path, method):
    client, learner_id = app
    sign_in(client, "lea@example.com")
    token = csrf_of(soup(client.get("/login")))
    data = {"csrf_token": token} if method == "POST" else None
    response = client.request(method, url_of(path, learner_id), data=data, follow_redirects=False)
    assert response.status_code == 403, response.text
    assert "Instructor pages are for instructor accounts." in response.text


@pytest.mark.parametrize(("path", "method"), ROUTES)
def test_an_instructor_is_served(app, path, method):
    client, learner_id = app
    sign_in(client, "ina@example.com")
    token = csrf_of(soup(client.get("/login")))
    data = {"csrf_token": token} if method == "POST" else None
    response = client.request(method, url_of(path, learner_id), data=data, follow_redirects=False)
    assert response.status_code == (303 if method == "POST" else 200), response.text


def test_a_guest_learner_is_sent_to_sign_in(app):
    client, _ = app
    page = soup(client.get("/steps/size-the-group"))
    form = {"csrf_token": csrf_of(page), "design_version": "0", "event_log.partitions": "64"}
    assert (
        client.post("/steps/size-the-group", data=form, follow_redirects=False).status_code == 303
    )
    response = client.get("/instructor", follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"].endswith("/login?next=%2Finstructor")


def test_signing_in_from_the_redirect_lands_on_the_instructor_page(app):
    client, _ = app
    login = client.get("/instructor/health")
    page = soup(login)
    assert page.select_one("input[name=next]")["value"] == "/instructor/health"
    form = {
        "csrf_token": csrf_of(page),
        "email": "ina@example.com",
        "password": "a long password",
        "next": "/instructor/health",
    }
    response = client.post("/login", data=form, follow_redirects=False)
    assert (response.status_code, response.headers["location"]) == (303, "/instructor/health")


@pytest.mark.parametrize("target", ["https://evil.example/", "//evil.example/", "/\t/evil.example"])
def test_sign_in_never_sends_a_visitor_to_another_site(app, target):
    client, _ = app
    page = soup(client.get("/login", params={"next": target}))
    assert page.select_one("input[name=next]") is None
    form = {
        "csrf_token": csrf_of(page),
        "email": "ina@example.com",
        "password": "a long password",
        "next": target,
    }
    response = client.post("/login", data=form, follow_redirects=False)
    # An instructor's own home, never the target.
    assert response.headers["location"] in ("/instructor", "http://testserver/instructor")


def test_a_learner_signs_in_to_the_overview_and_an_instructor_to_the_class(app):
    client, _ = app
    form = {"csrf_token": csrf_of(soup(client.get("/login"))), "password": "a long password"}
    response = client.post("/login", data={**form, "email": "ina@example.com"})
    assert response.url.path == "/instructor"


def test_an_instructor_sees_a_link_to_the_instructor_pages(app):
    client, _ = app
    sign_in(client, "ina@example.com")
    assert soup(client.get("/")).select_one("nav.account a[href='/instructor']") is not None
    sign_in(client, "lea@example.com")
    assert soup(client.get("/")).select_one("nav.account a[href='/instructor']") is None


def test_the_first_instructor_comes_from_designlab_create_user(make_client, tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'var' / 'first.sqlite3'}"
    monkeypatch.setenv("DATABASE_URL", url)
    get_settings.cache_clear()
    try:
        result = CliRunner().invoke(
            main,
            ["create-user", "--email", "First@Example.com", "--role", "instructor"],
            input="a long password\na long password\n",
        )
    finally:
        get_settings.cache_clear()
    assert result.exit_code == 0, result.output
    assert result.output.strip().endswith("created instructor first@example.com (id 1)")
    client = make_client(steps_dir=SECOND_COURSE, database_url=url)
    sign_in(client, "first@example.com")
    page = soup(client.get("/instructor"))
    assert page.select_one("h1").get_text(strip=True) == "Class · Apply order events exactly once"
