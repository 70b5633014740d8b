"""``url_for`` for templates, with each route's path worked out once.

Starlette's template ``url_for`` searches the app's routes on every call; the step rail alone
calls it fourteen times per page, which was a large share of a cached simulation run's time.
The path of a route name with given parameters never changes while the app runs, so it is
computed once per router (:func:`route_path`) and only made absolute per request, exactly as
``Request.url_for`` does.
"""

from __future__ import annotations

from typing import Any

from jinja2 import pass_context
from starlette.datastructures import URL, URLPath
from starlette.requests import Request

_PATHS: dict[int, tuple[Any, dict[tuple[str, tuple[tuple[str, Any], ...]], URLPath]]] = {}
"""Per router (by id, holding the router so its id is never reused): route paths by name and
parameters. Routers cannot be dictionary keys (they compare by value)."""


def route_path(provider: Any, name: str, params: tuple[tuple[str, Any], ...]) -> URLPath:
    """``provider.url_path_for(name, **params)`` for a router or app, cached per router.

    Raises starlette.routing.NoMatchFound when no route has that name and parameters."""
    entry = _PATHS.get(id(provider))
    if entry is None or entry[0] is not provider:
        entry = _PATHS[id(provider)] = (provider, {})
    paths = entry[1]
    key = (name, params)
    path = paths.get(key)
    if path is None:
        path = paths[key] = provider.url_path_for(name, **dict(params))
    return path


@pass_context
def url_for(context: Any, name: str, /, **path_params: Any) -> URL:
    """The absolute URL of route ``name`` for the template's request (as Starlette's)."""
    request: Request = context["request"]
    provider = request.scope.get("router") or request.scope.get("app")
    if provider is None:
        raise RuntimeError("url_for needs a request inside the application")
    path = route_path(provider, name, tuple(sorted(path_params.items())))
    return path.make_absolute_url(base_url=request.base_url)


@pass_context
def step_href(context: Any, slug: str) -> str:
    """Where a step link goes: the learner's step page, or in an instructor's preview (the
    context has ``preview_query``, the chosen design's query string) the preview of that step."""
    query = context.get("preview_query")
    if query is not None:
        return f"{url_for(context, 'instructor_preview', slug=slug)}{query}"
    return str(url_for(context, "step", slug=slug))
