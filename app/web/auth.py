"""Signing in and out, and the guest learner a visitor becomes on first saving a decision.

A guest who signs in to an account hands its work over (app.guest_work): per course, to an
account with no work there; where the account has its own, the next page says the guest's work
was not merged.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Query, Request
from sqlalchemy.orm import Session
from starlette.responses import RedirectResponse, Response

from app.accounts import authenticate, end_sessions
from app.deps import CsrfDep, SessionDep, UserDep, csrf_token
from app.guest_work import hand_over_guest_work
from app.models import Role, User
from app.session_state import bind_user
from app.web.templating import NOTICE, render

router = APIRouter()

NOT_MERGED = (
    "Your account already had saved work, so it was kept: what you did as a guest in this "
    "browser was not merged into it. Next time, download design.yaml from the report card "
    "before signing in, then upload it to continue."
)


def sign_in(request: Request, user: User) -> None:
    """Bind ``user`` (flushed: it has an id) to this browser session, under the user's current
    session generation (a fresh CSRF token comes with it)."""
    request.session.clear()
    bind_user(request.session, user)


def current_or_guest_learner(request: Request, session: Session, user: User | None) -> User:
    """The signed-in user, or a new guest learner (no email, no password) bound to the session."""
    if user is not None:
        return user
    guest = User(role=Role.learner)
    session.add(guest)
    session.flush()
    csrf = request.session.get("csrf")
    sign_in(request, guest)
    if csrf is not None:
        request.session["csrf"] = csrf
    return guest


def local_path(target: str) -> str:
    """``target`` when it is a path on this site (``/instructor``), else "".

    Refused: anything not starting with one "/", and backslashes, blanks or control characters
    (browsers drop some of them: ``/`` + tab + ``/host`` would become ``//host``, another site).
    """
    if any(c == "\\" or ord(c) <= 0x20 or ord(c) == 0x7F for c in target):
        return ""
    return target if target.startswith("/") and not target.startswith("//") else ""


@router.get("/login", name="login")
def login_form(
    request: Request, user: UserDep, next: Annotated[str, Query(max_length=2000)] = ""
) -> Response:
    """The sign-in form; ``next`` is where to go after signing in (a path on this site)."""
    context = {
        "csrf_token": csrf_token(request),
        "user": user,
        "error": None,
        "email": "",
        "next": local_path(next),
    }
    return render(request, "login.html", context)


@router.post("/login", dependencies=[CsrfDep])
def login(
    request: Request,
    session: SessionDep,
    user: UserDep,
    email: Annotated[str, Form()],
    password: Annotated[str, Form()],
    next: Annotated[str, Form(max_length=2000)] = "",
) -> Response:
    """Check the email and password; on success go to ``next`` (a path on this site), else the
    overview (an instructor: the class page); a mismatch shows the form again (401).

    A guest learner signing in hands its work to the account in the same transaction
    (app.guest_work.hand_over_guest_work); where the account kept its own work, the next page
    shows NOT_MERGED once.
    """
    account = authenticate(session, email, password)
    if account is None:
        context = {
            "csrf_token": csrf_token(request),
            "user": user,
            "error": "That email and password do not match an account.",
            "email": email,
            "next": local_path(next),
        }
        return render(request, "login.html", context, status_code=401)
    not_merged: tuple[str, ...] = ()
    if user is not None and user.email is None:
        not_merged = hand_over_guest_work(session, user, account).not_merged
    session.commit()
    sign_in(request, account)
    if not_merged:
        request.session[NOTICE] = NOT_MERGED
    home = "instructor_class" if account.role is Role.instructor else "overview"
    return RedirectResponse(local_path(next) or request.url_for(home), status_code=303)


@router.post("/logout", name="logout", dependencies=[CsrfDep])
def logout(request: Request, session: SessionDep, user: UserDep) -> Response:
    """Sign out: end every session of the user on the server (any copy of this cookie, and the
    user's sessions on other devices, no longer sign anyone in), then forget it here."""
    if user is not None:
        end_sessions(user)
        session.commit()
    request.session.clear()
    return RedirectResponse(request.url_for("overview"), status_code=303)
