"""The app's production middleware, installed by ``install(app, settings)`` from create_app.

Order, outermost first: request id and access log, security headers (both wrap FastAPI's own
error middleware too, so a 500 page carries them), the refusal of a declared body over
MAX_BODY_BYTES (before FastAPI's own limit, which would answer in plain text), then FastAPI's
stack, in which the rate limits sit inside the session middleware (they read the session's
user). A body streamed without a length is cut at the same size by FastAPI's own limit
(``FastAPI(max_body_size=...)``, set by create_app).
"""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from starlette.types import ASGIApp

from app.logs import configure_logging
from app.middleware.body_limit import ContentLengthLimitMiddleware
from app.middleware.rate_limit import RateLimitMiddleware, rules_from
from app.middleware.request_id import RequestIdMiddleware
from app.middleware.security_headers import SecurityHeadersMiddleware, docs_policy
from app.settings import Settings


def _docs_html(app: FastAPI) -> str:
    """The Swagger UI page as FastAPI serves it (to hash its inline script)."""
    assert app.openapi_url is not None
    html = get_swagger_ui_html(
        openapi_url=app.openapi_url,
        title=f"{app.title} - Swagger UI",
        oauth2_redirect_url=app.swagger_ui_oauth2_redirect_url,
        init_oauth=app.swagger_ui_init_oauth,
        swagger_ui_parameters=app.swagger_ui_parameters,
    ).body
    return bytes(html).decode()


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
    docs_csp = docs_policy(_docs_html(app)) if app.docs_url and app.openapi_url else None
    build_stack = app.build_middleware_stack

    def build_with_outer_middleware() -> ASGIApp:
        inner = ContentLengthLimitMiddleware(build_stack(), max_body_bytes=settings.max_body_bytes)
        headers = SecurityHeadersMiddleware(
            inner, docs_path=app.docs_url, docs_csp=docs_csp, hsts=settings.env == "production"
        )
        return RequestIdMiddleware(headers)

    app.build_middleware_stack = build_with_outer_middleware  # type: ignore[method-assign]
