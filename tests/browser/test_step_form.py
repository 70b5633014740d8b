"""In Chromium, the step form's own script (static/js/step.js): focus lands on the results heading
after a run, and typed values are not lost to a reload without a word."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from tests.browser.chromium import CHROMIUM, CHROMIUM_ARGS
from tests.live_server import LiveServer

pytestmark = pytest.mark.browser

STEP = "/steps/run-api"
"""A step without a scenario: its run grades the design at once, no simulation to wait for."""
NUMBERS = "/steps/exactly-once-effects"
"""A step with a number field in hours (its estimate is closed-form; nothing here runs it)."""
RETENTION = "Keep processed event ids for"
RETENTION_FIELD = "delivery.dedupe_key_retention_hours"
SLOW_MS = 60_000


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    workdir: Path = tmp_path_factory.mktemp("step-form")
    database = f"sqlite:///{workdir / 'designlab.sqlite3'}"
    live = LiveServer({"DATABASE_URL": database}, workdir / "server.log").start()
    yield live.url
    live.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser: Browser, server: str) -> Iterator[Page]:
    context = browser.new_context(base_url=server)
    page = context.new_page()
    open_step(page, STEP)
    yield page
    context.close()


def open_step(page: Page, path: str) -> None:
    page.goto(path)
    page.wait_for_load_state("networkidle")


def active_id(page: Page) -> str:
    return str(page.evaluate("document.activeElement && document.activeElement.id"))


def test_after_a_run_keyboard_focus_is_on_the_results_heading(page: Page):
    page.get_by_role("button", name="Run the checks").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#results .verdict")).to_be_visible(timeout=SLOW_MS)
    expect(page.locator("#results-heading")).to_be_focused()
    assert active_id(page) == "results-heading"
    assert page.locator("#results-heading").get_attribute("tabindex") == "-1"


def test_reloading_with_typed_unsaved_values_warns_then_offers_them_back(page: Page):
    dialogs: list[str] = []

    def accept(dialog) -> None:  # leave the page, as a learner who clicked "Reload" would
        dialogs.append(dialog.type)
        dialog.accept()

    page.on("dialog", accept)
    open_step(page, NUMBERS)
    saved = page.get_by_label(RETENTION, exact=True).input_value()
    page.get_by_label(RETENTION, exact=True).fill("77")
    page.reload()
    page.wait_for_load_state("networkidle")
    assert dialogs == ["beforeunload"]
    assert page.get_by_label(RETENTION, exact=True).input_value() == saved
    notice = page.locator("#draft-notice")
    expect(notice).to_contain_text("not saved before the page was reloaded")
    notice.get_by_role("button", name="Restore my unsaved values").click()
    assert page.get_by_label(RETENTION, exact=True).input_value() == "77"
    expect(notice).to_have_count(0)


def test_a_saved_form_reloads_without_a_question_or_a_draft(page: Page):
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.type), dialog.accept()))
    open_step(page, NUMBERS)
    page.get_by_label(RETENTION, exact=True).fill("96")
    page.get_by_role("button", name="Save decisions").click()
    expect(page.locator("#decisions .saved")).to_be_visible(timeout=SLOW_MS)
    page.reload()
    page.wait_for_load_state("networkidle")
    assert dialogs == []
    assert page.get_by_label(RETENTION, exact=True).input_value() == "96"
    expect(page.locator("#draft-notice")).to_have_count(0)


def test_a_stale_tab_lists_what_differs_and_a_button_keeps_every_saved_value(
    browser: Browser, server: str
):
    context = browser.new_context(base_url=server)
    first, stale = context.new_page(), context.new_page()
    for tab in (first, stale):
        open_step(tab, NUMBERS)
    first.get_by_label(RETENTION, exact=True).fill("48")
    first.get_by_role("button", name="Save decisions").click()
    expect(first.locator("#decisions .saved")).to_be_visible(timeout=SLOW_MS)
    stale.get_by_label(RETENTION, exact=True).fill("12")
    stale.get_by_role("button", name="Save decisions").click()
    row = stale.locator(f"#conflicts tr[data-field='{RETENTION_FIELD}']")
    expect(row.locator(".mine")).to_have_text("12 hours", timeout=SLOW_MS)
    expect(row.locator(".theirs")).to_have_text("48 hours")
    stale.get_by_role("button", name="Use all saved values and save").click()
    expect(stale.locator("#decisions .saved")).to_be_visible(timeout=SLOW_MS)
    assert stale.get_by_label(RETENTION, exact=True).input_value() == "48"
    expect(stale.locator("#conflicts")).to_have_count(0)
    context.close()
