"""HTML helpers for web tests: parse a response and read the form's CSRF token."""

from __future__ import annotations

from bs4 import BeautifulSoup


def soup(response) -> BeautifulSoup:
    """The response body parsed as HTML."""
    return BeautifulSoup(response.text, "html.parser")


def csrf_of(page: BeautifulSoup) -> str:
    """The CSRF token of the first form on the page."""
    field = page.select_one("input[name=csrf_token]")
    assert field is not None, "no csrf_token input on the page"
    return str(field["value"])


def unlabelled_controls(page: BeautifulSoup) -> list[str]:
    """Names of inputs/selects with neither a <label for=id> nor an enclosing <label>/<legend>."""
    missing = []
    for control in page.select("form input, form select, form textarea"):
        if control.get("type") in ("hidden", "submit"):
            continue
        has_for = control.get("id") and page.select_one(f'label[for="{control["id"]}"]')
        enclosed = control.find_parent("label") is not None
        if not (has_for or enclosed):
            missing.append(str(control.get("name")))
    return missing
