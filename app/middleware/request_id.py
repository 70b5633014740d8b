"""A request id on every request, every response and every log line, and one access log line.

The id is the client's ``X-Request-ID`` when it is a short token of letters, digits, ``.``, ``_``
and ``-`` (a proxy's id is kept), else a new random one. It is sent back in ``X-Request-ID``,
exposed to code as ``app.logs.request_id`` (a context variable the log formatter reads) and as
``request.state.request_id``. The access line logs method, path (never the query string, which
may carry secrets), status and duration.
"""

from __future__ import annotations

import logging
import re
import time
import uuid

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.logs import request_id

HEADER = "X-Request-ID"
_VALID = re.compile(r"[A-Za-z0-9._-]{1,128}")

access_log = logging.getLogger("designlab.access")


def choose_request_id(incoming: str | None) -> str:
    """``incoming`` if it is a safe token (1-128 of ``[A-Za-z0-9._-]``), else a new uuid4 hex."""
    if incoming is not None and _VALID.fullmatch(incoming):
        return incoming
    return uuid.uuid4().hex


class RequestIdMiddleware:
    """Pure ASGI middleware: set the request id, echo it, log one access line per request."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = choose_request_id(Headers(scope=scope).get(HEADER))
        request_id.set(rid)
        scope.setdefault("state", {})["request_id"] = rid
        started = time.perf_counter()
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                MutableHeaders(scope=message)[HEADER] = rid
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            client = scope.get("client")
            access_log.info(
                "%s %s %s",
                scope["method"],
                scope["path"],
                status,
                extra={
                    "method": scope["method"],
                    "path": scope["path"],
                    "status": status,
                    "duration_ms": round((time.perf_counter() - started) * 1000, 1),
                    "client": client[0] if client else None,
                },
            )
