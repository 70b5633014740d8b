"""Typed FastAPI dependencies of the web pages and the JSON API: settings, database session,
course and its grading material, current user, CSRF check."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.orm import Session

from app import session_state
from app.course.content import LoadedCourse
from app.db import session_scope
from app.errors import CourseUnavailable, DesignlabError, Forbidden
from app.grading.grader import CourseMaterial
from app.models import User
from app.settings import Settings
from simulator.errors import FieldError, InputFileError
from simulator.pricing import Pricing, load_pricing

CSRF_FIELD = "csrf_token"
CSRF_HEADER = "X-CSRF-Token"


def get_settings(request: Request) -> Settings:
    """The app's settings (set by create_app)."""
    settings: Settings = request.app.state.settings
    return settings


def get_session(request: Request) -> Iterator[Session]:
    """A database session per request: committed when the route returns, rolled back on error."""
    yield from session_scope(request.app.state.sessionmaker)


def get_course(request: Request) -> LoadedCourse:
    """The loaded course (reloaded after a change when watching steps/).

    Raises CourseUnavailable, listing the problems, when course.yaml cannot be loaded.
    """
    loaded: LoadedCourse = request.app.state.course_cache.get()
    if loaded.course is None:
        raise CourseUnavailable(
            "steps/course.yaml could not be loaded.",
            fields=[p.to_field_error() for p in loaded.errors],
        )
    return loaded


@lru_cache(maxsize=8)
def _pricing(path: Path, mtime_ns: int) -> Pricing:
    return load_pricing(path)


def get_material(course: Annotated[LoadedCourse, Depends(get_course)]) -> CourseMaterial:
    """The course and its pricing catalog (re-read when the catalog file changes)."""
    assert course.course is not None
    path = course.root / course.course.pricing
    try:
        pricing = _pricing(path, path.stat().st_mtime_ns)
    except (OSError, InputFileError) as exc:
        errors = (
            exc.errors
            if isinstance(exc, InputFileError)
            else [FieldError(str(path), None, "", str(exc))]
        )
        raise DesignlabError("The course's pricing catalog cannot be loaded.", errors) from exc
    return CourseMaterial(course, pricing)


def get_current_user(
    request: Request, session: Annotated[Session, Depends(get_session, scope="function")]
) -> User | None:
    """The signed-in user (or guest learner) of this browser session, or None.

    None too when the server no longer honours the session (app.session_state.is_live: the
    user signed out elsewhere, changed password, was removed, or the session is past its idle or
    absolute lifetime); its user keys are then dropped from the cookie.
    """
    user_id = session_state.session_user_id(request.session)
    if user_id is None:
        return None
    user = session.get(User, user_id)
    now_s = session_state.now_s()
    if not session_state.is_live(request.session, user, request.app.state.settings, now_s):
        session_state.forget_user(request.session)
        return None
    session_state.touch(request.session, now_s)
    return user


def csrf_token(request: Request) -> str:
    """This session's CSRF token (created on first use); forms send it back in ``csrf_token``."""
    token = request.session.get("csrf")
    if not isinstance(token, str):
        token = secrets.token_urlsafe(32)
        request.session["csrf"] = token
    return token


async def verify_csrf(request: Request) -> None:
    """Refuse a state-changing request whose CSRF token (form field or header) does not match.

    Raises Forbidden.
    """
    expected = request.session.get("csrf")
    sent = request.headers.get(CSRF_HEADER)
    if sent is None:
        form = await request.form()
        value = form.get(CSRF_FIELD)
        sent = value if isinstance(value, str) else None
    if not (isinstance(expected, str) and sent and secrets.compare_digest(expected, sent)):
        raise Forbidden("The form expired or came from another site. Reload the page and retry.")


SettingsDep = Annotated[Settings, Depends(get_settings)]
SessionDep = Annotated[Session, Depends(get_session, scope="function")]
"""The request's session. ``scope="function"``: it commits when the route returns, before the
response starts (FastAPI's default would commit after the response is sent, so a client could
be told "saved" about a write that a crash or a failed commit then loses)."""
CourseDep = Annotated[LoadedCourse, Depends(get_course)]
UserDep = Annotated[User | None, Depends(get_current_user)]
MaterialDep = Annotated[CourseMaterial, Depends(get_material)]
CsrfDep = Depends(verify_csrf)
