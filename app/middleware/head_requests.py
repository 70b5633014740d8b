"""``HEAD`` answered like ``GET`` without the body (RFC 9110 section 9.3.2).

FastAPI registers a route for the methods it names, so ``@router.get`` pages answered ``HEAD /``
with 405, which monitors and link checkers read as the page being down. This middleware runs a
``HEAD`` request as the ``GET`` it mirrors and drops the body, keeping the status and headers
(``Content-Length`` included: it is the length a ``GET`` would have).
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class HeadAsGetMiddleware:
    """Pure ASGI middleware: a ``HEAD`` request runs as ``GET``; body messages go out empty."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def send_without_body(message: Message) -> None:
            if message["type"] == "http.response.body":
                message = {**message, "body": b""}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, send_without_body)
