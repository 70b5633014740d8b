"""What a browser session says about its user, and whether the server still honours it.

The session cookie is signed, not encrypted, and any copy of it works like the original, so a
cookie alone cannot be taken back. The server therefore checks on every request:

- the user row still exists (a removed account ends its sessions: there is nobody to load);
- the session's ``generation`` equals the user's ``session_generation``: signing out or a new
  password raises that number (``app.accounts.end_sessions``), which ends every copy of every
  earlier session of the user, on any device;
- an account's session is younger than SESSION_MAX_AGE_HOURS (from signing in) and was used
  within SESSION_IDLE_MINUTES. A guest's session has neither limit: it is the guest's only key
  to their work (there is no password to sign in again with), so, as before, it lasts until its
  cookie expires, SESSION_MAX_AGE_HOURS after the guest's latest visit.

A session failing any of these is treated as signed out and its user keys are dropped.
"""

from __future__ import annotations

import time
from collections.abc import MutableMapping
from typing import Any

from app.models import User
from app.settings import Settings

USER_ID = "user_id"
GENERATION = "generation"
STARTED_AT = "started_at"
"""Unix time (s) of signing in (or of a guest's creation)."""
SEEN_AT = "seen_at"
"""Unix time (s) of the latest request that found the session live (kept to the minute)."""
GUEST = "guest"
"""True for a guest learner (no email): its rate limits count against its client address."""

USER_KEYS = (USER_ID, GENERATION, STARTED_AT, SEEN_AT, GUEST)
SEEN_AT_RESOLUTION_S = 60
"""``seen_at`` is rewritten at most once a minute, so the idle limit is exact to a minute."""


def now_s() -> float:
    """The current Unix time in seconds (one place, so tests can move the clock)."""
    return time.time()


def bind_user(state: MutableMapping[str, Any], user: User, at_s: float | None = None) -> None:
    """Record in the session ``state`` that it belongs to ``user`` (whose row has an id), under
    the user's current session generation, started and seen at ``at_s`` (Unix s; default now)."""
    now = int(now_s() if at_s is None else at_s)
    state[USER_ID] = user.id
    state[GENERATION] = user.session_generation or 0
    state[STARTED_AT] = now
    state[SEEN_AT] = now
    state[GUEST] = user.email is None


def forget_user(state: MutableMapping[str, Any]) -> None:
    """Drop the user keys from ``state`` (other keys, such as the CSRF token, stay)."""
    for key in USER_KEYS:
        state.pop(key, None)


def session_user_id(state: MutableMapping[str, Any]) -> int | None:
    """The user id the session claims (not yet checked against the server), or None."""
    user_id = state.get(USER_ID)
    return user_id if isinstance(user_id, int) and not isinstance(user_id, bool) else None


def is_live(
    state: MutableMapping[str, Any], user: User | None, settings: Settings, at_s: float
) -> bool:
    """True when ``state`` is a session of ``user`` that the server still honours at ``at_s``
    (Unix seconds): same generation and, for an account, younger than the absolute lifetime and
    used within the idle lifetime (a guest's session has no time limit but its cookie's). False
    for a removed user (None) or a session without those keys (signed before sessions were
    revocable)."""
    if user is None:
        return False
    generation, started, seen = (state.get(k) for k in (GENERATION, STARTED_AT, SEEN_AT))
    if not (isinstance(generation, int) and isinstance(started, int) and isinstance(seen, int)):
        return False
    if generation != (user.session_generation or 0):
        return False
    if user.email is None and state.get(GUEST) is True:
        return True
    return (
        at_s - started < settings.session_max_age_hours * 3600
        and at_s - seen < settings.session_idle_minutes * 60
    )


def touch(state: MutableMapping[str, Any], at_s: float) -> None:
    """Note a use of a live session at ``at_s`` (at most once per SEEN_AT_RESOLUTION_S)."""
    seen = state.get(SEEN_AT)
    if not isinstance(seen, int) or at_s - seen >= SEEN_AT_RESOLUTION_S:
        state[SEEN_AT] = int(at_s)


def is_account_session(state: MutableMapping[str, Any]) -> bool:
    """True when the session says it belongs to an account (not a guest). A session without the
    flag (older cookies) counts as a guest's, so its limits fall back to the client address."""
    return session_user_id(state) is not None and state.get(GUEST) is False
