"""Narratives render as sanitised HTML with heading anchors."""

from __future__ import annotations

from bs4 import BeautifulSoup

from app.course.narrative import heading_anchors, render_markdown


def test_raw_html_and_script_urls_do_not_pass_through():
    html = str(
        render_markdown(
            "<script>alert(1)</script>\n\n[x](javascript:alert(1)) [ok](https://example.com)"
        )
    )
    page = BeautifulSoup(html, "html.parser")
    assert page.find("script") is None
    assert [a["href"] for a in page.find_all("a")] == ["https://example.com"]
    assert page.find("a")["rel"] == ["noopener", "noreferrer"]


def test_headings_get_the_anchors_checks_link_to():
    text = "## Commit order\n\ntext\n\n### Dedupe, in the same transaction\n"
    page = BeautifulSoup(str(render_markdown(text)), "html.parser")
    assert [h["id"] for h in page.select("h2, h3")] == heading_anchors(text)
    assert heading_anchors(text) == ["commit-order", "dedupe-in-the-same-transaction"]


def test_tables_keep_only_their_alignment_style():
    page = BeautifulSoup(str(render_markdown("| a | b |\n|---|--:|\n| 1 | 2 |\n")), "html.parser")
    assert [td.get("style") for td in page.select("td")] == [None, "text-align:right"]
