"""Security headers on every response: a self-only CSP without inline script or style, no
framing, nosniff and a referrer policy; the Swagger UI page allows exactly its own inline script."""

from __future__ import annotations

import pytest

from app.middleware.security_headers import inline_script_hashes

PAGES = ["/", "/steps/run-api", "/login", "/healthz", "/no-such-page", "/api/openapi.json"]


def directives(policy: str) -> dict[str, list[str]]:
    parsed = {}
    for part in policy.split(";"):
        name, *values = part.split()
        parsed[name] = values
    return parsed


@pytest.mark.parametrize("path", PAGES)
def test_every_response_has_the_security_headers(client, path):
    response = client.get(path)
    policy = directives(response.headers["content-security-policy"])
    assert policy["default-src"] == ["'self'"]
    assert policy["script-src"] == ["'self'"]
    assert policy["style-src"] == ["'self'"]
    assert policy["frame-ancestors"] == ["'none'"]
    assert policy["object-src"] == ["'none'"]
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["referrer-policy"] == "same-origin"


def test_hsts_only_in_production(make_client):
    assert "strict-transport-security" not in make_client().get("/healthz").headers
    production = make_client(env="production", secret_key="a-real-secret-of-some-length")
    assert production.get("/healthz").headers["strict-transport-security"].startswith("max-age=")


def test_the_docs_page_allows_only_its_own_inline_script(client):
    response = client.get("/api/docs")
    assert response.status_code == 200
    hashes = inline_script_hashes(response.text)
    assert hashes, "Swagger UI starts with an inline script"
    script_src = directives(response.headers["content-security-policy"])["script-src"]
    assert set(hashes) <= set(script_src)
    assert "'unsafe-inline'" not in script_src
    assert response.headers["x-frame-options"] == "DENY"
