"""User accounts: argon2id password hashes, creation and sign-in checks."""

from __future__ import annotations

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.errors import Conflict
from app.models import Role, User

_hasher = PasswordHasher()

MIN_PASSWORD_LENGTH = 10


def hash_password(password: str) -> str:
    """argon2id hash of ``password`` in PHC string format (argon2-cffi's default parameters)."""
    return _hasher.hash(password)


def verify_password(password_hash: str | None, password: str) -> bool:
    """True when ``password`` matches ``password_hash``; False for a guest without a password."""
    if not password_hash:
        return False
    try:
        return _hasher.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


def normalise_email(email: str) -> str:
    """Emails are compared case-insensitively and without surrounding blanks."""
    return email.strip().lower()


def create_user(session: Session, email: str, role: Role, password: str) -> User:
    """Add a user with a hashed password; raise Conflict when the email is taken.

    Raises ValueError for an email without ``@`` or a password shorter than MIN_PASSWORD_LENGTH.
    """
    email = normalise_email(email)
    if "@" not in email:
        raise ValueError(f"not an email address: {email!r}")
    if len(password) < MIN_PASSWORD_LENGTH:
        raise ValueError(f"password must have at least {MIN_PASSWORD_LENGTH} characters")
    if session.scalar(select(User).where(User.email == email)) is not None:
        raise Conflict(f"a user with email {email} already exists")
    user = User(email=email, role=role, password_hash=hash_password(password))
    session.add(user)
    session.flush()
    return user


def authenticate(session: Session, email: str, password: str) -> User | None:
    """The user with this email and password, or None (same answer for either mistake)."""
    user = session.scalar(select(User).where(User.email == normalise_email(email)))
    if user is None or not verify_password(user.password_hash, password):
        return None
    return user
