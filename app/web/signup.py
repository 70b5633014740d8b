"""Signing up: a new learner account, or the guest learner of this browser keeping its progress.

A visitor who starts without an account becomes a guest learner (a user row with no email) on
first saving a decision; signing up gives that same row an email and an argon2id password hash,
so every saved decision and step result stays theirs, and signing in elsewhere resumes it.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from sqlalchemy import select
from starlette.responses import RedirectResponse, Response

from app.accounts import MIN_PASSWORD_LENGTH, create_user, hash_password, normalise_email
from app.models import Role, User
from app.web.auth import sign_in
from app.web.csrf import csrf_ok
from app.web.deps import SessionDep, UserDep, csrf_token
from app.web.templating import render

router = APIRouter()

MAX_EMAIL_LENGTH = 320


def _context(
    request: Request, user: User | None, email: str = "", errors: dict[str, str] | None = None
) -> dict[str, Any]:
    return {
        "csrf_token": csrf_token(request),
        "user": user,
        "email": email,
        "errors": errors or {},
        "min_password": MIN_PASSWORD_LENGTH,
        "guest": user is not None and user.email is None,
    }


@router.get("/signup", name="signup")
def signup_form(request: Request, user: UserDep) -> Response:
    """The sign-up form (email and password)."""
    return render(request, "signup.html", _context(request, user))


@router.post("/signup")
async def signup(request: Request, session: SessionDep, user: UserDep) -> Response:
    """Create the account (or name the guest learner) and sign in; go to the overview.

    Mistakes answer 422 (403 for an expired form) with the message at the field and the email
    kept: an address without "@", an email already taken, a password shorter than
    MIN_PASSWORD_LENGTH.
    """
    form = {k: v for k, v in (await request.form()).items() if isinstance(v, str)}
    email = normalise_email(form.get("email", ""))
    password = form.get("password", "")
    errors: dict[str, str] = {}
    if not csrf_ok(request, form):
        errors["form"] = "The form expired. Enter your password again and resubmit."
    if "@" not in email or len(email) > MAX_EMAIL_LENGTH:
        errors["email"] = "Enter an email address, such as ana@example.com."
    elif session.scalar(select(User).where(User.email == email)) is not None:
        errors["email"] = "An account with this email exists: sign in instead."
    if len(password) < MIN_PASSWORD_LENGTH:
        errors["password"] = f"Use at least {MIN_PASSWORD_LENGTH} characters."
    if errors:
        status = 403 if "form" in errors else 422
        return render(
            request, "signup.html", _context(request, user, email, errors), status_code=status
        )
    if user is not None and user.email is None:
        user.email = email
        user.password_hash = hash_password(password)
        account = user
    else:
        account = create_user(session, email, Role.learner, password)
    session.flush()
    sign_in(request, account)
    session.commit()
    return RedirectResponse(request.url_for("overview"), status_code=303)
