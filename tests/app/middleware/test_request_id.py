"""Every response carries X-Request-ID: the client's when it is a safe token, else a new one."""

from __future__ import annotations

import re

import pytest

from app.middleware.request_id import choose_request_id


def test_a_safe_incoming_id_is_echoed(client):
    response = client.get("/healthz", headers={"X-Request-ID": "proxy-7f3a.2_b"})
    assert response.headers["x-request-id"] == "proxy-7f3a.2_b"


@pytest.mark.parametrize("incoming", ["", "a b", "x" * 129, "<script>", "id\r\nSet-Cookie: a=1"])
def test_an_unsafe_incoming_id_is_replaced_by_a_fresh_one(incoming):
    chosen = choose_request_id(incoming)
    assert chosen != incoming
    assert re.fullmatch(r"[0-9a-f]{32}", chosen)


def test_without_an_incoming_id_each_response_gets_its_own(client):
    first = client.get("/healthz").headers["x-request-id"]
    second = client.get("/healthz").headers["x-request-id"]
    assert re.fullmatch(r"[0-9a-f]{32}", first) and first != second


def test_error_responses_carry_the_id_too(client):
    response = client.get("/no-such-page", headers={"X-Request-ID": "abc"})
    assert response.status_code == 404
    assert response.headers["x-request-id"] == "abc"
