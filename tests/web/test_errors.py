"""One error path: HTML page, htmx fragment or JSON, by what the client asked for."""

from __future__ import annotations

from tests.web.html import soup


def test_a_browser_gets_an_html_error_page(course_client):
    response = course_client.get("/steps/missing", headers={"Accept": "text/html"})
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/html")
    page = soup(response)
    assert page.select_one("title").get_text() == "Not found · designlab"
    assert "no step 'missing'" in page.select_one(".error-box p").get_text()


def test_a_json_client_gets_the_error_as_json(course_client):
    response = course_client.get("/steps/missing", headers={"Accept": "application/json"})
    assert response.status_code == 404
    assert response.json() == {
        "error": {
            "status": 404,
            "title": "Not found",
            "detail": "There is no step 'missing' in this course.",
            "fields": [],
        }
    }


def test_htmx_gets_an_error_fragment(course_client):
    response = course_client.get("/steps/missing", headers={"HX-Request": "true"})
    assert response.status_code == 404
    assert "<html" not in response.text
    assert soup(response).select_one("div.error-box")["data-status"] == "404"


def test_an_unknown_path_uses_the_same_error_page(course_client):
    response = course_client.get("/nowhere")
    assert response.status_code == 404
    assert soup(response).select_one(".error-box h2").get_text() == "Not found"


def test_the_error_page_header_shows_the_signed_in_learner(course_client):
    from tests.web.test_signup import sign_up

    sign_up(course_client, "ana@example.com")
    page = soup(course_client.get("/nowhere"))
    account = page.select_one("#account")
    assert "ana@example.com" in account.get_text()
    assert not [a for a in account.select("a") if a.get_text().strip() == "Sign in"]
    visitor = soup(course_client.__class__(course_client.app).get("/nowhere"))
    assert [a for a in visitor.select("#account a") if a.get_text().strip() == "Sign in"]


def test_an_input_file_error_is_a_422_naming_file_line_and_field(course_client):
    from fastapi import APIRouter

    from simulator.design import Design
    from simulator.files import load_model

    router = APIRouter()

    @router.get("/api/v1/broken-design")
    def broken() -> None:
        load_model(Design, "version: 1\nevent_log:\n  partitions: 0\n", "design.yaml")

    course_client.app.include_router(router)
    response = course_client.get("/api/v1/broken-design")
    assert response.status_code == 422
    assert response.json()["error"]["fields"] == [
        {
            "file": "design.yaml",
            "line": 3,
            "field": "event_log.partitions",
            "message": "Input should be greater than or equal to 1",
        }
    ]
