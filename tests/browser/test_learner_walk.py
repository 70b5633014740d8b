"""In Chromium, as a new learner: all 13 steps typed from the reference design, each run, the
report card, the downloaded design graded on the command line; and two steps without JavaScript.

Screenshots of a step page (desktop and phone width) and of the report card are written to
test-artifacts/ for a person to look at.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from app.course.choices import bundled, held_option
from app.course.content import LoadedStep
from app.course.design_fields import get_value
from app.course.loader import load_course
from app.web.forms import as_form_value
from simulator.design import Design
from tests.browser.chromium import CHROMIUM, CHROMIUM_ARGS
from tests.live_server import REPO, LiveServer

pytestmark = pytest.mark.browser

ARTIFACTS = REPO / "test-artifacts"
COURSE = load_course(REPO / "steps")
REFERENCE = COURSE.reference_design or Design()
RUN_BUTTON = re.compile(r"^Run the (simulation|checks)$")
SLOW_MS = 60_000
DESIGNLAB = Path(sys.executable).with_name("designlab")


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("walk")


@pytest.fixture(scope="module")
def server(workdir: Path) -> Iterator[str]:
    """The app on a free port with its own SQLite file, stopped after the module."""
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


def type_reference_values(page: Page, step: LoadedStep) -> None:
    """Enter the reference design's value of every decision of ``step``, as a learner would."""
    assert step.step is not None
    for decision in step.step.decisions:
        # A bundled decision's option (its own value and the values it sets with it) is named
        # by its position in the form: the one the reference holds.
        if bundled(decision):
            value = held_option(decision, REFERENCE)
            assert value, f"the reference holds no option of {decision.field}"
        else:
            value = as_form_value(get_value(REFERENCE, decision.field))
        if decision.widget == "radio":
            page.locator(f"input[name='{decision.field}'][value='{value}']").check()
        elif decision.widget == "checkbox":
            box = page.get_by_label(decision.label, exact=True)
            box.check() if value == "true" else box.uncheck()
        elif decision.widget == "select":
            page.get_by_label(decision.label, exact=True).select_option(value)
        else:
            page.get_by_label(decision.label, exact=True).fill(value)


def run_step(page: Page) -> None:
    page.get_by_role("button", name=RUN_BUTTON).click()
    expect(page.locator("#results .verdict")).to_be_visible(timeout=SLOW_MS)


def test_a_new_learner_walks_every_step_to_the_report_card(
    server: str, browser: Browser, workdir: Path
) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server + "/")
    page.get_by_role("link", name="Start").click()
    for step in COURSE.steps:
        expect(page.locator("h1")).to_have_text(f"Step {step.number} · {step.title}")
        assert step.step is not None
        before = page.locator("#estimate").inner_text()
        type_reference_values(page, step)
        if step.slug == "evening-peak":  # sizes the fleet: the live estimate follows the typing
            expect(page.locator("#estimate")).not_to_have_text(before, timeout=SLOW_MS)
        if step.number == 2:
            run_by_keyboard(page)
        elif step.number == 5:
            check_a_second_click_does_nothing(page)
        else:
            run_step(page)
        rail = page.locator(f"#rail li:nth-of-type({step.number}) a")
        expect(rail).to_have_attribute("aria-label", re.compile(r"(done \d+/\d+|try again)$"))
        if step.slug == "worker-crash":
            check_fault_results(page)
            page.screenshot(path=str(ARTIFACTS / "step-page.png"), full_page=True)
        following = COURSE.next_step(step)
        if following is None:
            page.locator("#results").get_by_role("link", name="Your report card").click()
        else:
            page.locator("#results").get_by_role(
                "link", name=f"Next: step {following.number}"
            ).click()
    expect(page.locator("h1")).to_have_text("Your report card", timeout=SLOW_MS)
    page.screenshot(path=str(ARTIFACTS / "report-card.png"), full_page=True)
    total = page.locator("table.report-steps tfoot td.num").inner_text()
    with page.expect_download() as download:
        page.get_by_role("link", name="Download design.yaml").click()
    design_file = workdir / "design.yaml"
    download.value.save_as(design_file)
    graded = grade_on_the_command_line(design_file, workdir)
    assert total == f"{graded['points']}/{graded['max_points']}"
    shown = {
        row.get_attribute("data-step"): row.locator("td.num").inner_text()
        for row in page.locator("table.report-steps tbody tr").all()
    }
    assert shown == {s["id"]: f"{s['points']}/{s['max_points']}" for s in graded["steps"]}
    phone_screenshot(browser, context, server)
    context.close()
    assert errors == [], "the browser console reported errors"


def run_by_keyboard(page: Page) -> None:
    """Tab from the last decision to the run button: its focus is visible, Enter runs it."""
    fields = page.locator("#decision-form").locator("input:not([type=hidden]), select")
    fields.last.focus()
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent.trim()") == "Run the simulation"
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") != "none"
    page.keyboard.press("Enter")
    expect(page.locator("#results .verdict")).to_be_visible(timeout=SLOW_MS)


def check_a_second_click_does_nothing(page: Page) -> None:
    runs: list[str] = []
    page.on("request", lambda r: runs.append(r.url) if r.url.endswith("/run") else None)
    button = page.get_by_role("button", name=RUN_BUTTON)
    button.click()
    button.click(force=True, no_wait_after=True)
    expect(page.locator("#results .verdict")).to_be_visible(timeout=SLOW_MS)
    expect(button).to_be_enabled()
    assert len(runs) == 1, runs


def check_fault_results(page: Page) -> None:
    figures = page.locator(".big-figures dt")
    expect(figures).to_have_text(
        ["Events lost", "Duplicate effects", "Tokens paid again", "Time to drain"]
    )
    expect(page.locator("canvas#chart-lag")).to_be_visible()
    assert page.evaluate("window.Chart.getChart('chart-lag') !== undefined")
    expect(page.locator("#chart-lag-summary")).to_contain_text("(shaded)")
    expect(page.locator("#reprocessing")).to_contain_text("re-processing rate")
    kinds = page.locator("#results li.check .check-kind")
    expect(kinds.first).to_be_visible()
    assert set(kinds.all_inner_texts()) <= {"simulated", "design review"}
    expect(page.locator("#architecture svg.diagram")).to_be_visible()


def grade_on_the_command_line(design_file: Path, workdir: Path) -> dict[str, object]:
    steps = str(REPO / "steps")
    done = subprocess.run(
        [str(DESIGNLAB), "grade", str(design_file), "--format", "json", "--steps-dir", steps],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode in (0, 1), done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def phone_screenshot(browser: Browser, desktop, server: str) -> None:
    phone = browser.new_context(viewport={"width": 390, "height": 844})
    phone.add_cookies(desktop.cookies())
    page = phone.new_page()
    page.goto(server + "/steps/worker-crash")
    expect(page.locator("#results .verdict")).to_be_visible()
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page scrolls sideways at phone width ({width} px)"
    page.screenshot(path=str(ARTIFACTS / "step-page-phone.png"))
    page.locator("#results").screenshot(path=str(ARTIFACTS / "step-results-phone.png"))
    phone.close()


def test_without_javascript_two_steps_post_and_reload_with_results(
    server: str, browser: Browser
) -> None:
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(server + "/steps/run-api")
    for step in COURSE.steps[:2]:
        page.goto(f"{server}/steps/{step.slug}")
        type_reference_values(page, step)
        with page.expect_navigation():
            page.get_by_role("button", name=RUN_BUTTON).click()
        assert page.url == f"{server}/steps/{step.slug}#results"
        expect(page.locator("#results .verdict")).to_be_visible()
        expect(page.locator("#results ol.checks > li").first).to_be_visible()
        field = step.step.decisions[-1] if step.step else None
        if field is not None and field.widget == "number":
            value = as_form_value(get_value(REFERENCE, field.field))
            expect(page.get_by_label(field.label, exact=True)).to_have_value(value)
    expect(page.locator("#rail li:nth-of-type(2) a")).to_have_attribute(
        "aria-label", re.compile(r"(done \d+/\d+|try again)$")
    )
    summary = page.locator(".chart-summary").first
    expect(summary).to_be_visible()
    expect(page.locator(".chart-canvas").first).to_be_hidden()
    context.close()
