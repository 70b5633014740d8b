"""Every text field of every submitted form is refused up front when it holds a control
character (a NUL byte, an escape...): 422 naming the field, before any route reads the form.

Installed as a dependency of the whole app, so no form route can forget it. It reads the form
through the request, which keeps it: the route's own ``request.form()`` or ``Form()`` parameters
get the same form without reading the body again (so the first read's limits, FORM_MAX_FILES and
FORM_MAX_FIELDS, are the ones that apply). Uploaded files are not text fields and are left to
the route (a design file's own reader refuses what it cannot read).
"""

from __future__ import annotations

from fastapi import Request

from app.control_characters import first_control_character
from app.errors import BadInput
from simulator.errors import FieldError

FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
FORM_MAX_FILES = 1
"""Files in one form: the design upload is the only form with a file."""
FORM_MAX_FIELDS = 200
"""Fields in one form: a step's decisions, its CSRF token and design version, with room."""


async def refuse_control_characters(request: Request) -> None:
    """Raise BadInput (422) naming the first form field whose name or text value holds a
    control character (app/control_characters.py); do nothing for a request without a form."""
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if request.method in ("GET", "HEAD", "OPTIONS") or media not in FORM_TYPES:
        return
    form = await request.form(max_files=FORM_MAX_FILES, max_fields=FORM_MAX_FIELDS)
    for name, value in form.multi_items():
        found = first_control_character(name) or (
            first_control_character(value) if isinstance(value, str) else None
        )
        if found is not None:
            field = name if first_control_character(name) is None else repr(name)
            raise BadInput(
                f"The field {field} holds a control character ({found}), which no form field "
                "may contain; nothing was saved. Retype the value and send the form again.",
                [FieldError("form", None, field, f"control character {found}")],
            )
