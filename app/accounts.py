"""User accounts: argon2id password hashes, creation, sign-in checks, a new password and an
account's removal (both end the account's sessions everywhere)."""

from __future__ import annotations

import unicodedata

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from email_validator import EmailNotValidError, validate_email
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.errors import Conflict, NotFound
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
    """The form an email is stored and compared in, without validating it: Unicode NFKC (so
    "josé" typed precomposed or with a combining accent, or in full-width letters, is one
    address), surrounding blanks dropped, lower case (addresses are compared case-insensitively,
    as designlab always has)."""
    return unicodedata.normalize("NFKC", email.strip()).lower()


def valid_email(email: str) -> str:
    """``email`` checked by ``email-validator`` (RFC 5321/5322 syntax, internationalised
    addresses, a domain with a dot and not a special-use one; no DNS lookup: deliverability is
    not checked, the app may have no network), in normal form (its domain case-folded and
    IDNA-decoded, then ``normalise_email``).

    Raises ValueError with the library's reason for an address that is not valid: ``@evil``
    (nothing before the @), ``a@evil`` (no dot in the domain), a control character, and so on.
    """
    try:
        checked = validate_email(
            unicodedata.normalize("NFKC", email.strip()), check_deliverability=False
        )
    except EmailNotValidError as exc:
        raise ValueError(f"not an email address: {exc}") from exc
    return normalise_email(checked.normalized)


def lookup_email(email: str) -> str:
    """The stored form to look ``email`` up by: its valid normal form when it is valid (so
    ``ana@XN--EXMPLE-CUA.COM`` finds ``ana@exämple.com``), else ``normalise_email`` (accounts
    made before addresses were validated can still sign in)."""
    try:
        return valid_email(email)
    except ValueError:
        return normalise_email(email)


def create_user(session: Session, email: str, role: Role, password: str) -> User:
    """Add a user with a hashed password; raise Conflict when the email is taken.

    Raises ValueError for an email that is not valid (``valid_email``) or a password shorter
    than MIN_PASSWORD_LENGTH.
    """
    email = valid_email(email)
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
    user = session.scalar(select(User).where(User.email == lookup_email(email)))
    if user is None or not verify_password(user.password_hash, password):
        return None
    return user


def end_sessions(user: User) -> None:
    """End every session of ``user`` everywhere: raise its session generation, which each
    request compares with its session's (app.session_state). The caller commits."""
    user.session_generation = (user.session_generation or 0) + 1


def find_account(session: Session, email: str) -> User:
    """The account with this email; raises NotFound when there is none."""
    user = session.scalar(select(User).where(User.email == lookup_email(email)))
    if user is None:
        raise NotFound(f"no account with email {lookup_email(email)}")
    return user


def change_password(session: Session, email: str, password: str) -> User:
    """Give the account ``email`` a new password and end all its sessions (every device, every
    copied cookie: its session generation goes up). The caller commits.

    Raises NotFound for an unknown email and ValueError for a password shorter than
    MIN_PASSWORD_LENGTH.
    """
    if len(password) < MIN_PASSWORD_LENGTH:
        raise ValueError(f"password must have at least {MIN_PASSWORD_LENGTH} characters")
    user = find_account(session, email)
    user.password_hash = hash_password(password)
    end_sessions(user)
    session.flush()
    return user


def remove_account(session: Session, email: str) -> User:
    """Delete the account ``email`` with its designs, progress and check outcomes (the database
    cascades); its sessions end because no user is left to load. The caller commits.

    Raises NotFound for an unknown email.
    """
    user = find_account(session, email)
    session.delete(user)
    session.flush()
    return user
