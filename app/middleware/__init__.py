"""The app's production middleware, installed by ``install(app, settings)`` from create_app.

Order, outermost first: the client address and scheme from ``X-Forwarded-For`` and
``X-Forwarded-Proto``, believed only from a peer in FORWARDED_ALLOW_IPS (uvicorn's
ProxyHeadersMiddleware; a forged header from anyone else changes nothing, so rate limits count the
real peer), request id and access log, security headers (both wrap FastAPI's own error middleware
too, so a 500 page carries them), the refusal of a declared body over MAX_BODY_BYTES (before
FastAPI's own limit, which would answer in plain text), ``HEAD`` run as ``GET`` without the body
(head_requests.py), then FastAPI's stack, in which the rate limits sit inside the session
middleware (they read the session's user). A body streamed without a length is cut at the same size
by FastAPI's own limit (``FastAPI(max_body_size=...)``, set by create_app).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from fastapi import FastAPI
from starlette.types import ASGIApp
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from app.logs import configure_logging
from app.middleware.body_limit import ContentLengthLimitMiddleware
from app.middleware.head_requests import HeadAsGetMiddleware
from app.middleware.rate_limit import RateLimitMiddleware, rules_from
from app.middleware.request_id import RequestIdMiddleware
from app.middleware.security_headers import SecurityHeadersMiddleware, docs_policy
from app.settings import Settings
from app.web.api_docs import DOCS_PATH, docs_html

if TYPE_CHECKING:
    from uvicorn._types import ASGI3Application


def install(app: FastAPI, settings: Settings) -> None:
    """Configure JSON logging and add the middleware above to ``app``.

    Call it before the session middleware is added, so the rate limits end up inside it.
    """
    configure_logging(settings.log_level)
    app.add_middleware(
        RateLimitMiddleware,
        rules=rules_from(settings),
        storage_uri=settings.redis_url or "memory://",
    )
    docs_csp = docs_policy(docs_html(app)) if app.openapi_url else None
    build_stack = app.build_middleware_stack

    def build_with_outer_middleware() -> ASGIApp:
        inner = ContentLengthLimitMiddleware(
            HeadAsGetMiddleware(build_stack()), max_body_bytes=settings.max_body_bytes
        )
        headers = SecurityHeadersMiddleware(
            inner, docs_path=DOCS_PATH, docs_csp=docs_csp, hsts=settings.env == "production"
        )
        # uvicorn types ASGI apps with its own TypedDicts, Starlette with plain mappings: the
        # same protocol in two vocabularies, hence the casts.
        proxied = ProxyHeadersMiddleware(
            cast("ASGI3Application", RequestIdMiddleware(headers)),
            trusted_hosts=settings.forwarded_allow_ips,
        )
        return cast(ASGIApp, proxied)

    app.build_middleware_stack = build_with_outer_middleware  # type: ignore[method-assign]
