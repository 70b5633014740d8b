"""Signing up: a new learner account, or the guest learner of this browser keeping its progress.

A visitor who starts without an account becomes a guest learner (a user row with no email) on
first saving a decision; signing up gives that same row an email and an argon2id password hash,
so every saved decision and step result stays theirs, and signing in elsewhere resumes it.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from sqlalchemy import select
from starlette.responses import RedirectResponse, Response

from app.accounts import MIN_PASSWORD_LENGTH, create_user, hash_password, valid_email
from app.deps import SessionDep, UserDep, csrf_token
from app.models import Role, User
from app.web.auth import local_path, sign_in
from app.web.csrf import csrf_ok
from app.web.templating import NOTICE, render

router = APIRouter()

MAX_EMAIL_LENGTH = 320


KEPT = "Signed up: everything you did as a guest in this browser is now your account's."


def _context(
    request: Request,
    user: User | None,
    email: str = "",
    errors: dict[str, str] | None = None,
    next_path: str = "",
) -> dict[str, Any]:
    return {
        "csrf_token": csrf_token(request),
        "user": user,
        "email": email,
        "errors": errors or {},
        "min_password": MIN_PASSWORD_LENGTH,
        "guest": user is not None and user.email is None,
        "next": local_path(next_path),
    }


@router.get("/signup", name="signup")
def signup_form(
    request: Request, user: UserDep, next: Annotated[str, Query(max_length=2000)] = ""
) -> Response:
    """The sign-up form (email and password); ``next`` is where to go after signing up (a path
    on this site, such as the step the learner was on)."""
    return render(request, "signup.html", _context(request, user, next_path=next))


@router.post("/signup")
async def signup(request: Request, session: SessionDep, user: UserDep) -> Response:
    """Create the account (or name the guest learner) and sign in; go to the overview.

    Mistakes answer 422 (403 for an expired form) with the message at the field and the email
    kept: an address that is not valid (app.accounts.valid_email, with its reason), an email
    already taken, a password shorter than MIN_PASSWORD_LENGTH.
    """
    form = {k: v for k, v in (await request.form()).items() if isinstance(v, str)}
    email = form.get("email", "").strip()
    password = form.get("password", "")
    errors: dict[str, str] = {}
    if not csrf_ok(request, form):
        errors["form"] = "The form expired. Enter your password again and resubmit."
    try:
        if len(email) > MAX_EMAIL_LENGTH:
            raise ValueError("The address is too long.")
        email = valid_email(email)
    except ValueError as exc:
        reason = str(exc).removeprefix("not an email address: ")
        errors["email"] = f"Enter an email address, such as ana@example.com. {reason}"
    else:
        if session.scalar(select(User).where(User.email == email)) is not None:
            errors["email"] = "An account with this email exists: sign in instead."
    if len(password) < MIN_PASSWORD_LENGTH:
        errors["password"] = f"Use at least {MIN_PASSWORD_LENGTH} characters."
    if errors:
        status = 403 if "form" in errors else 422
        context = _context(request, user, email, errors, form.get("next", ""))
        return render(request, "signup.html", context, status_code=status)
    if user is not None and user.email is None:
        user.email = email
        user.password_hash = hash_password(password)
        account = user
    else:
        account = create_user(session, email, Role.learner, password)
    session.flush()
    kept = account is user
    sign_in(request, account)  # a fresh session: the notice goes in after
    if kept:
        request.session[NOTICE] = KEPT
    session.commit()
    target = local_path(form.get("next", "")) or request.url_for("overview")
    return RedirectResponse(target, status_code=303)
