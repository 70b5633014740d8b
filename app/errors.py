"""designlab's domain errors: one base class with a title and an HTTP status.

The web layer maps every DesignlabError to a page, a fragment or JSON in one place
(app/web/errors.py); the CLI maps them to exit codes (app/cli.py).
"""

from __future__ import annotations

from simulator.errors import FieldError


class DesignlabError(Exception):
    """Base class of every error designlab raises on purpose.

    ``status`` is the HTTP status, ``title`` a short human heading, ``detail`` the message and
    ``fields`` the per-field problems (file, line, field, message) when input was wrong.
    """

    status = 500
    title = "Something went wrong"

    def __init__(self, detail: str = "", fields: list[FieldError] | None = None):
        self.detail = detail or self.title
        self.fields = fields or []
        super().__init__(self.detail)


class BadInput(DesignlabError):
    """The request or file is not valid; ``fields`` says which field and why."""

    status = 422
    title = "Invalid input"


class NotFound(DesignlabError):
    """No such page, step or record."""

    status = 404
    title = "Not found"


class Forbidden(DesignlabError):
    """The user may not do this (for example a learner opening an instructor page)."""

    status = 403
    title = "Not allowed"


class Conflict(DesignlabError):
    """The record changed meanwhile (optimistic lock) or already exists."""

    status = 409
    title = "Conflict"


class CourseUnavailable(DesignlabError):
    """steps/course.yaml cannot be loaded, so no page of the course can be shown."""

    status = 503
    title = "The course is unavailable"


class Unavailable(DesignlabError):
    """The service could not do the work now, through no fault of the request (503 with
    ``Retry-After``): a simulation worker died, the pool broke, the wall-time budget ran out
    while the machine was busy. Nothing is recorded for the learner; the same request may
    succeed later. ``retry_after_seconds`` is the wait to suggest (whole seconds, >= 1)."""

    status = 503
    title = "The simulation could not run"

    def __init__(
        self,
        detail: str = "",
        fields: list[FieldError] | None = None,
        *,
        retry_after_seconds: int = 5,
    ):
        super().__init__(detail, fields)
        self.retry_after_seconds = max(1, int(retry_after_seconds))
