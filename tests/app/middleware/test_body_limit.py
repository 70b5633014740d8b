"""A request body over MAX_BODY_BYTES is refused with 413 in the app's error format, whether its
length is declared or it is streamed without one."""

from __future__ import annotations

REFERENCE_YAML = "version: 1\nname: small enough\n"


def test_a_declared_body_over_the_limit_is_413_json_for_the_api(make_client):
    client = make_client(max_body_bytes=4096)
    response = client.post(
        "/api/v1/simulate?scenario=peak",
        content=b"a: 1\n" * 2000,
        headers={"content-type": "application/yaml"},
    )
    assert response.status_code == 413
    error = response.json()["error"]
    assert error["status"] == 413
    assert "4,096 bytes" in error["detail"]


def test_a_declared_body_over_the_limit_is_413_html_for_a_form(make_client):
    client = make_client(max_body_bytes=4096)
    response = client.post("/steps/run-api", data={"name": "x" * 5000})
    assert response.status_code == 413
    assert response.headers["content-type"].startswith("text/html")
    assert "4,096 bytes" in response.text


def test_a_streamed_body_over_the_limit_is_cut_at_the_same_size(make_client):
    client = make_client(max_body_bytes=4096)

    def chunks():
        for _ in range(10):
            yield b"b: 2\n" * 200

    response = client.post(
        "/api/v1/simulate?scenario=peak",
        content=chunks(),
        headers={"content-type": "application/yaml"},
    )
    assert response.status_code == 413
    assert response.json()["error"]["status"] == 413


def test_a_body_under_the_limit_is_served(make_client):
    client = make_client(max_body_bytes=4096)
    yaml_type = {"content-type": "application/yaml"}
    response = client.post("/api/v1/grade", content=b"version: 1\nname: [", headers=yaml_type)
    assert response.status_code == 422
