"""Learners driving a live server over HTTP, each with its own cookie jar (session)."""

from __future__ import annotations

from dataclasses import dataclass, field

import httpx
from bs4 import BeautifulSoup

STEP = "evening-peak"
"""The step that decides FIELD (step 7, "Scale to the evening peak within budget")."""
FIELD = "event_log.partitions"


def form_fields(html: str) -> dict[str, str]:
    """What a browser would submit from the page's decision form: hidden and text inputs, checked
    radios and checkboxes, selected options."""
    form = BeautifulSoup(html, "html.parser").select_one("#decisions form")
    assert form is not None, "the step page has no decision form"
    values: dict[str, str] = {}
    for control in form.select("input[name]"):
        kind = control.get("type", "text")
        if kind in ("radio", "checkbox") and not control.has_attr("checked"):
            continue
        values[str(control["name"])] = str(control.get("value", "on"))
    for select in form.select("select[name]"):
        chosen = select.select_one("option[selected]") or select.select_one("option")
        if chosen is not None:
            values[str(select["name"])] = str(chosen.get("value", ""))
    return values


@dataclass
class Learner:
    """One browser: its client (cookies), and what it last read from the step page."""

    number: int
    client: httpx.AsyncClient
    form: dict[str, str] = field(default_factory=dict)

    async def open_step(self) -> dict[str, str]:
        """GET the step page and keep its form; returns it."""
        response = await self.client.get(f"/steps/{STEP}")
        response.raise_for_status()
        self.form = form_fields(response.text)
        return self.form

    async def save(self, partitions: int) -> httpx.Response:
        """POST the form with ``partitions`` as htmx does (a 2xx is the acknowledgement); on
        success keep the form that came back (it holds the new design version)."""
        data = {**self.form, FIELD: str(partitions)}
        response = await self.client.post(
            f"/steps/{STEP}", data=data, headers={"HX-Request": "true"}
        )
        if response.status_code == 200:
            self.form = form_fields(response.text)
        return response
