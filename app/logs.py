"""Logs as JSON lines on stderr, each with the request id of the request that wrote it.

A line: ``{"time": "...", "level": "INFO", "logger": "designlab.access", "message": "GET / 200",
"request_id": "3f2a...", ...}`` plus any ``extra`` fields the caller gave. Uvicorn's own loggers
write through the same handler; its access log is off, because RequestIdMiddleware writes one line
per request with the request id and without the query string. Nothing here logs a request body,
a form field or a header, so passwords, session cookies and CSRF tokens never reach the log.
"""

from __future__ import annotations

import logging
import sys
from contextvars import ContextVar

from pythonjsonlogger.json import JsonFormatter

_HANDLER_NAME = "designlab-json"
UVICORN_LOGGERS = ("uvicorn", "uvicorn.error", "uvicorn.access")

request_id: ContextVar[str | None] = ContextVar("request_id", default=None)
"""The id of the request being served in this context (set by RequestIdMiddleware), or None."""


class RequestIdFilter(logging.Filter):
    """Adds ``request_id`` (None outside a request) to every record it sees."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id.get()
        return True


def json_formatter() -> JsonFormatter:
    """The JSON line format: time, level, logger, message, request_id, then extras."""
    return JsonFormatter(
        "{asctime}{levelname}{name}{message}{request_id}",
        style="{",
        rename_fields={"asctime": "time", "levelname": "level", "name": "logger"},
        datefmt="%Y-%m-%dT%H:%M:%S%z",
    )


def configure_logging(level: str = "INFO") -> logging.Handler:
    """Send every log record to stderr as a JSON line (idempotent: one handler however often it
    is called) and route uvicorn's loggers through it. Returns the handler."""
    root = logging.getLogger()
    handler = next((h for h in root.handlers if h.get_name() == _HANDLER_NAME), None)
    if handler is None:
        handler = logging.StreamHandler(sys.stderr)
        handler.set_name(_HANDLER_NAME)
        handler.setFormatter(json_formatter())
        handler.addFilter(RequestIdFilter())
        root.addHandler(handler)
    root.setLevel(level)
    for name in UVICORN_LOGGERS:
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.propagate = True
    logging.getLogger("uvicorn.access").disabled = True
    return handler
