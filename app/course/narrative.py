"""Step narratives: CommonMark with tables and heading anchors, sanitised to safe HTML."""

from __future__ import annotations

from functools import lru_cache

import nh3
from markdown_it import MarkdownIt
from markupsafe import Markup
from mdit_py_plugins.anchors import anchors_plugin

ALLOWED_TAGS = nh3.ALLOWED_TAGS | {"h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody"}
ALLOWED_ATTRIBUTES = {
    **{tag: set(attrs) for tag, attrs in nh3.ALLOWED_ATTRIBUTES.items()},
    **{f"h{level}": {"id"} for level in range(1, 7)},
    "th": {"style"},
    "td": {"style"},
}


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    return (
        MarkdownIt("commonmark", {"html": False, "typographer": True})
        .enable(["table", "smartquotes", "replacements"])
        .use(anchors_plugin, min_level=2, max_level=4)
    )


def render_markdown(text: str) -> Markup:
    """HTML for Markdown ``text``: raw HTML is not passed through, and the output is sanitised
    with nh3 (links get rel="noopener noreferrer"). h2-h4 headings get GitHub-style ids."""
    html = _markdown().render(text)
    return Markup(
        nh3.clean(
            html,
            tags=ALLOWED_TAGS,
            attributes=ALLOWED_ATTRIBUTES,
            filter_style_properties={"text-align"},
        )
    )


def heading_anchors(text: str) -> list[str]:
    """The ids given to the h2-h4 headings of Markdown ``text`` (targets for a check's concept)."""
    return list(headings(text))


def headings(text: str) -> dict[str, str]:
    """The h2-h4 headings of Markdown ``text``: their ids (anchors) to their plain text, in order
    (a check's concept link reads the heading it points at)."""
    tokens = _markdown().parse(text)
    found: dict[str, str] = {}
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and "id" in token.attrs and i + 1 < len(tokens):
            found[str(token.attrs["id"])] = tokens[i + 1].content
    return found
