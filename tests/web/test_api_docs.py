"""/api/docs is Swagger UI with every asset from this site (the swagger-ui-dist npm package in
static/vendor), under a policy that allows no other origin."""

from __future__ import annotations

from tests.web.html import soup


def test_the_api_docs_load_no_script_from_another_site(client):
    response = client.get("/api/docs")
    assert response.status_code == 200
    page = soup(response)
    scripts = [tag["src"] for tag in page.select("script[src]")]
    links = [tag["href"] for tag in page.select("link[href]")]
    assert scripts == ["/static/vendor/swagger-ui-bundle.js"]
    assert sorted(links) == [
        "/static/vendor/swagger-ui-favicon-32x32.png",
        "/static/vendor/swagger-ui.css",
    ]
    assert "http://" not in response.text and "https://" not in response.text
    policy = response.headers["content-security-policy"]
    assert "http" not in policy and "'unsafe-inline'" not in policy
    assert "style-src 'self';" in policy


def test_the_api_docs_assets_are_served_from_this_site(client):
    expected = {
        "/static/vendor/swagger-ui-bundle.js": "javascript",
        "/static/vendor/swagger-ui.css": "text/css",
        "/static/vendor/swagger-ui-favicon-32x32.png": "image/png",
    }
    for path, kind in expected.items():
        response = client.get(path)
        assert response.status_code == 200, f"{path}: run `make setup` (npm ci, vendor_assets)"
        assert kind in response.headers["content-type"]
        assert len(response.content) > 500
    assert b"SwaggerUIBundle" in client.get("/static/vendor/swagger-ui-bundle.js").content


def test_the_api_docs_are_not_in_the_openapi_document(client):
    assert "/api/docs" not in client.get("/api/openapi.json").json()["paths"]
