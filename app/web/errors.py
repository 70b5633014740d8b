"""One way to answer an error: a DesignlabError (or an HTTP error) becomes a page, a fragment or
JSON, chosen by what the client asked for. Registered on the app by ``install``.

An htmx request's error fragment replaces the page's ``#request-error`` box (``HX-Retarget``), so
the server's own words ("try again in 57 s") reach the learner whatever the request's target was;
base.html's htmx ``responseHandling`` swaps the statuses that carry such a message. An
``Unavailable`` error (503) carries ``Retry-After`` and is logged with the request's id.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import SQLAlchemyError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from app.deps import get_current_user
from app.errors import BadInput, DesignlabError, NotFound, Unavailable
from app.models import User
from app.web.templating import is_htmx, render
from simulator.errors import FieldError, InputFileError

log = logging.getLogger("designlab")


def wants_json(request: Request) -> bool:
    """True for the JSON API (``/api/...``) or a client that prefers JSON over HTML."""
    accept = request.headers.get("accept", "")
    return request.url.path.startswith("/api/") or (
        "application/json" in accept and "text/html" not in accept
    )


def _field_dict(error: FieldError) -> dict[str, Any]:
    return {"file": error.file, "line": error.line, "field": error.field, "message": error.message}


REQUEST_ERROR_TARGET = "#request-error"
"""Where an htmx request's error fragment goes (the step page's box under its buttons)."""


def error_response(request: Request, error: DesignlabError) -> Response:
    """``error`` as JSON ``{"error": {status, title, detail, fields}}``, an HTML fragment for
    htmx (retargeted to REQUEST_ERROR_TARGET), or a full HTML page. An Unavailable error gets
    ``Retry-After`` and a log line."""
    response = _error_body(request, error)
    if isinstance(error, Unavailable):
        log.warning(
            "answered %s: %s",
            error.status,
            error.detail,
            extra={"path": request.url.path, "retry_after_s": error.retry_after_seconds},
        )
        response.headers["Retry-After"] = str(error.retry_after_seconds)
    return response


def _error_body(request: Request, error: DesignlabError) -> Response:
    if wants_json(request):
        body = {
            "error": {
                "status": error.status,
                "title": error.title,
                "detail": error.detail,
                "fields": [_field_dict(f) for f in error.fields],
            }
        }
        return JSONResponse(body, status_code=error.status)
    context = {
        "error": error,
        "user": _page_user(request),
        "show_fields": _show_fields(request, error),
    }
    if not is_htmx(request):
        return render(request, "error.html", context, status_code=error.status)
    response = render(request, "_error.html", context, status_code=error.status)
    response.headers["HX-Retarget"] = REQUEST_ERROR_TARGET
    response.headers["HX-Reswap"] = "outerHTML"
    return response


def _page_user(request: Request) -> User | None:
    """The signed-in user (or guest) for the error page's header, detached from its session;
    None for a visitor, or when the database cannot say (the error may be the database's)."""
    if "session" not in request.scope or "user_id" not in request.session:
        return None
    try:
        with request.app.state.sessionmaker() as session:
            user = get_current_user(request, session)
            if user is not None:
                session.expunge(user)
            return user
    except SQLAlchemyError:
        log.warning("error page: the signed-in user could not be read", exc_info=True)
        return None


def _show_fields(request: Request, error: DesignlabError) -> bool:
    """File paths and lines are for the person who can fix them: input errors always, course
    errors only on a development instance."""
    return isinstance(error, BadInput) or request.app.state.settings.watch_steps


async def _designlab_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, DesignlabError)
    return error_response(request, exc)


async def _input_file_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, InputFileError)
    return error_response(request, BadInput("The file is not valid.", exc.errors))


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)
    if exc.status_code == 404:
        error: DesignlabError = NotFound(f"Nothing lives at {request.url.path}.")
    else:
        error = DesignlabError(str(exc.detail))
        error.status = exc.status_code
        error.title = str(exc.detail)
    return error_response(request, error)


async def _validation_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    fields = [
        FieldError("request", None, ".".join(str(p) for p in e["loc"]), str(e["msg"]))
        for e in exc.errors()
    ]
    return error_response(request, BadInput("The request is not valid.", fields))


async def _unexpected(request: Request, exc: Exception) -> Response:
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    error = DesignlabError("An internal error occurred; it has been logged.")
    return error_response(request, error)


def install(app: FastAPI) -> None:
    """Register the error handlers on ``app``."""
    app.add_exception_handler(DesignlabError, _designlab_error)
    app.add_exception_handler(InputFileError, _input_file_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(Exception, _unexpected)
