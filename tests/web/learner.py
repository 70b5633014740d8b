"""Helpers of the learner-path tests: the learner course's client, forms and database rows."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from app.db import make_engine, make_sessionmaker
from tests.web.html import csrf_of, soup

HX = {"HX-Request": "true"}

STEP2_DEFAULTS = {"event_log.partitions": "12", "delivery.dedupe": "none"}


def step_form(client: Any, slug: str, **values: str) -> dict[str, str]:
    """The step's form as the page renders it (CSRF token, design version, current values),
    with ``values`` (design path with ``__`` for ``.``) typed over it."""
    page = soup(client.get(f"/steps/{slug}"))
    form = {"csrf_token": csrf_of(page)}
    for field in page.select("#decision-form input, #decision-form select"):
        name, kind = field.get("name"), field.get("type")
        if not name or name == "csrf_token":
            continue
        if kind in ("radio", "checkbox") and not field.has_attr("checked"):
            continue
        if field.name == "select":
            chosen = field.select_one("option[selected]") or field.select_one("option")
            form[name] = str(chosen["value"])
        else:
            form[name] = str(field.get("value", ""))
    form.update({k.replace("__", "."): v for k, v in values.items()})
    return form


def rows(settings: Any, model: Any) -> list[Any]:
    """Every row of ``model`` in the test database."""
    factory = make_sessionmaker(make_engine(settings.database_url))
    with factory() as session:
        return list(session.scalars(select(model)))


def words(element: Any) -> str:
    """An element's text with all runs of white space made single spaces."""
    return " ".join(element.get_text(" ").split())
