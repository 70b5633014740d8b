"""HEAD answers like GET, without a body: same status and headers (a page that is up is 200)."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from fastapi.routing import iter_route_contexts

from app.main import create_app
from tests.web.html import soup

PAGES = ["/", "/login", "/signup", "/healthz", "/api/openapi.json", "/api/docs", "/report"]


def test_head_slash_answers_200_like_get(client):
    response = client.head("/")
    assert response.status_code == 200
    assert response.content == b""
    assert response.headers["content-type"].startswith("text/html")
    assert int(response.headers["content-length"]) > 0


@pytest.mark.parametrize("path", PAGES)
def test_head_answers_every_get_page_without_a_body(client, path):
    get = client.get(path)
    head = client.head(path)
    assert (head.status_code, head.content) == (get.status_code, b"")
    assert head.headers["content-type"] == get.headers["content-type"]
    assert "content-security-policy" in head.headers


def test_head_of_a_step_page_and_a_static_file(client):
    links = [urlsplit(a["href"]).path for a in soup(client.get("/")).select("a[href]")]
    step = next(path for path in links if path.startswith("/steps/"))
    assert client.head(step).status_code == 200
    assert client.head("/static/vendor/htmx.min.js").status_code == 200
    assert client.head("/no/such/page").status_code == 404


def test_every_get_route_without_parameters_answers_head(make_settings, client):
    paths = {
        route.path
        for route in iter_route_contexts(create_app(make_settings()).routes)
        if "GET" in (route.methods or ()) and route.path and "{" not in route.path
    }
    assert "/" in paths
    for path in sorted(paths):
        assert client.head(path, follow_redirects=False).status_code in (200, 303), path
