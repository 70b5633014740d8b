"""Jinja2 templates and the one way a route answers: the full page, or one block for HTMX.

A page template (``step.html``) keeps each swappable part in a named block (``decisions``,
``estimate``, ``results``). ``render`` returns the whole page to a normal request and only the
named block to an HTMX request (``HX-Request: true``), from the same template and context, and
always sends ``Vary: HX-Request`` so caches keep the two apart. A message put in the session
under ``NOTICE`` is shown once, at the top of the next full page.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from fastapi import Request
from jinja2_fragments.fastapi import Jinja2Blocks
from markupsafe import Markup
from starlette.responses import Response

from app.settings import Settings
from app.web import formatting, urls
from simulator import SIMULATOR_VERSION

if TYPE_CHECKING:
    from app.web.diagram import Diagram

PROJECT_ROOT = Path(__file__).resolve().parents[2]
TEMPLATES_DIR = PROJECT_ROOT / "templates"
STATIC_DIR = PROJECT_ROOT / "static"

NOTICE = "notice"
"""Session key of a one-time message (text) for the next full page; base.html shows it as
``notice``, then it is gone."""


def make_templates(settings: Settings) -> Jinja2Blocks:
    """The template set, with globals every page uses (``settings``, ``simulator_version``)."""
    templates = Jinja2Blocks(directory=str(TEMPLATES_DIR))
    templates.env.globals.update(settings=settings, simulator_version=SIMULATOR_VERSION)
    templates.env.globals["vendor_asset"] = vendor_asset
    templates.env.globals["url_for"] = urls.url_for
    templates.env.globals["step_href"] = urls.step_href
    templates.env.globals["diagram_svg"] = _diagram_renderer(templates)
    templates.env.globals["return_query"] = return_query
    formatting.register(templates.env)
    return templates


def _diagram_renderer(templates: Jinja2Blocks) -> Callable[[Diagram], Markup]:
    """``diagram_svg(diagram)``: _diagram.html drawn for an app.web.diagram.Diagram, kept for
    the last 256 distinct diagrams. A diagram is a frozen value, and the same one comes back on
    every page and run of a learner until the design or its results change; drawing it is
    hundreds of escaped SVG attributes."""

    @lru_cache(maxsize=256)
    def diagram_svg(diagram: Diagram) -> Markup:
        return Markup(templates.env.get_template("_diagram.html").render(diagram=diagram))

    return diagram_svg


def return_query(request: Request) -> str:
    """``?next=PATH`` for the sign-in and sign-up links: the page the learner is on (the step
    for a save or run of it), or "" on the overview and the account pages."""
    path = request.url.path
    if request.method != "GET":
        parts = path.split("/")
        if len(parts) < 3 or parts[1] != "steps":
            return ""
        path = f"/steps/{parts[2]}"
    if path in ("/", "/login", "/signup"):
        return ""
    return "?" + urlencode({"next": path})


def vendor_asset(name: str) -> str | None:
    """URL of an npm asset copied into static/vendor/ by the set-up, or None if it is absent."""
    return f"/static/vendor/{name}" if (STATIC_DIR / "vendor" / name).is_file() else None


def is_htmx(request: Request) -> bool:
    """True for a request made by htmx (it sends ``HX-Request: true``)."""
    return request.headers.get("HX-Request") == "true"


def render(
    request: Request,
    template: str,
    context: dict[str, Any],
    *,
    block: str | None = None,
    also: tuple[str, ...] = (),
    status_code: int = 200,
) -> Response:
    """Render ``template`` as a full page, or only ``block`` when htmx asked for it.

    ``block`` names the fragment an HTMX request gets; None means HTMX gets the full page too.
    ``also`` names more blocks sent after it to htmx (out-of-band swaps, ``hx-swap-oob``).
    A full page takes the session's NOTICE, if any, as ``notice`` (shown once).
    """
    templates: Jinja2Blocks = request.app.state.templates
    fragment = block if block is not None and is_htmx(request) else None
    session = request.scope.get("session")  # absent for an error answered outside the app
    if fragment is None and isinstance(session, dict) and NOTICE in session:
        context = {**context, "notice": session.pop(NOTICE)}
    if fragment and also:
        response = templates.TemplateResponse(
            request, template, context, status_code=status_code, block_names=[fragment, *also]
        )
    elif fragment:
        response = templates.TemplateResponse(
            request, template, context, status_code=status_code, block_name=fragment
        )
    else:
        response = templates.TemplateResponse(request, template, context, status_code=status_code)
    response.headers["Vary"] = "HX-Request"
    return response
