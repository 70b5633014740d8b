"""X-Forwarded-For is believed only from the proxies in FORWARDED_ALLOW_IPS: a client rotating
forged addresses is still counted under its own address, and so still meets the limit."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.web.html import csrf_of, soup

SIGN_INS = 30


def sign_in_statuses(client: TestClient, forged: bool) -> list[int]:
    token = csrf_of(soup(client.get("/login")))
    form = {"csrf_token": token, "email": "no@example.com", "password": "wrong password"}
    return [
        client.post(
            "/login",
            data=form,
            headers={"X-Forwarded-For": f"198.51.100.{n}"} if forged else {},
        ).status_code
        for n in range(SIGN_INS)
    ]


def test_forged_forwarded_addresses_from_an_untrusted_peer_meet_the_limit(make_client):
    app = make_client(rate_limit_sign_in="10/minute", forwarded_allow_ips="10.0.0.2").app
    client = TestClient(app, client=("203.0.113.7", 40000))
    statuses = sign_in_statuses(client, forged=True)
    assert statuses == [401] * 10 + [429] * 20


def test_the_trusted_proxy_s_forwarded_address_is_the_client(make_client):
    app = make_client(rate_limit_sign_in="10/minute", forwarded_allow_ips="10.0.0.0/24").app
    proxy = TestClient(app, client=("10.0.0.2", 40000))
    assert sign_in_statuses(proxy, forged=True) == [401] * SIGN_INS  # 30 clients, 1 try each
    response = proxy.get("/healthz", headers={"X-Forwarded-Proto": "https"})
    assert response.status_code == 200
