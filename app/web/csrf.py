"""The CSRF check of the learner's forms, which answer a refusal with the form still filled in.

The token is this session's (app.deps.csrf_token), sent back as a form field or as the htmx
header. Not the starlette-csrf library: its double-submit check reads the token from a request
header only, which a plain HTML form cannot send, and every form here must work without
JavaScript.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping

from fastapi import Request

from app.deps import CSRF_FIELD, CSRF_HEADER


def csrf_ok(request: Request, form: Mapping[str, str]) -> bool:
    """True when the session's CSRF token came with the request, in the form or the header.

    Either is enough: after a session expires, the page's htmx header still carries the old
    token while the re-rendered form carries the new one.
    """
    expected = request.session.get("csrf")
    if not isinstance(expected, str):
        return False
    sent = (request.headers.get(CSRF_HEADER), form.get(CSRF_FIELD))
    return any(s and secrets.compare_digest(expected, s) for s in sent)
