"""The templates keep to the Content-Security-Policy: no inline script (JSON data islands aside),
no inline style, no event-handler attributes, no javascript: URLs. A template that broke this
would be blocked in the browser, so it fails here first."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

TEMPLATES = sorted((Path(__file__).resolve().parents[2] / "templates").rglob("*.html"))

SCRIPT_TAG = re.compile(r"<script\b([^>]*)>", re.IGNORECASE)
RULES = {
    "inline style element": re.compile(r"<style\b", re.IGNORECASE),
    "style attribute": re.compile(r"\sstyle\s*=", re.IGNORECASE),
    "event handler attribute": re.compile(r"\son[a-z]+\s*=", re.IGNORECASE),
    "javascript: URL": re.compile(r"javascript:", re.IGNORECASE),
    "htmx inline handler (hx-on)": re.compile(r"\shx-on[:-]", re.IGNORECASE),
}


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda p: p.name)
def test_a_template_has_no_inline_script_style_or_handler(template: Path):
    text = template.read_text(encoding="utf-8")
    for attributes in SCRIPT_TAG.findall(text):
        assert "src=" in attributes or 'type="application/json"' in attributes, (
            f"{template.name}: inline <script{attributes}>"
        )
    for rule, pattern in RULES.items():
        match = pattern.search(text)
        assert match is None, f"{template.name}: {rule}: {text[match.start() : match.end() + 40]!r}"


def test_the_templates_were_found():
    assert len(TEMPLATES) >= 10
