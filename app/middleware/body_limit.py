"""Refuse a request whose declared body (``Content-Length``) is over MAX_BODY_BYTES before reading
any of it, with the app's own error answer (413 as JSON, an htmx fragment or a page).

A body sent without a length (chunked) is counted as it arrives by FastAPI's own limit
(``FastAPI(max_body_size=...)``), which stops reading at the same size.
"""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from app.errors import DesignlabError
from app.web.errors import error_response


class ContentTooLarge(DesignlabError):
    """The request body is over the size limit (413)."""

    status = 413
    title = "Request too large"


class ContentLengthLimitMiddleware:
    """Pure ASGI middleware: 413 for ``Content-Length`` over ``max_body_bytes``."""

    def __init__(self, app: ASGIApp, *, max_body_bytes: int):
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            declared = Headers(scope=scope).get("content-length", "")
            if declared.isdigit() and int(declared) > self.max_body_bytes:
                error = ContentTooLarge(
                    f"The request body is {int(declared):,} bytes; the limit is "
                    f"{self.max_body_bytes:,} bytes."
                )
                await error_response(Request(scope, receive), error)(scope, receive, send)
                return
        await self.app(scope, receive, send)
