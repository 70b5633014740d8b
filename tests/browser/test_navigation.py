"""In Chromium: the real server serves the overview, the link leads to step 1, htmx saves."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_healthy(url: str, process: subprocess.Popen[bytes], timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"{url}/healthz did not answer within {timeout_s} s")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`designlab serve` on a free port with its own SQLite file; stopped after the module."""
    port = free_port()
    database = tmp_path_factory.mktemp("browser") / "designlab.sqlite3"
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{database}",
        "ENV": "test",
        "SECRET_KEY": "browser-test-secret",
        "STEPS_DIR": str(REPO / "steps"),
    }
    designlab = Path(sys.executable).with_name("designlab")
    process = subprocess.Popen(
        [str(designlab), "serve", "--host", "127.0.0.1", "--port", str(port)],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context()
    yield context.new_page()
    context.close()


def test_overview_links_to_step_one(server: str, page: Page) -> None:
    page.goto(server + "/")
    expect(page.locator("h1")).to_have_text("Design a durable multi-agent workflow")
    expect(page.locator("ol.steps > li")).to_have_count(13)
    page.get_by_role("link", name="Start").click()
    page.wait_for_url(server + "/steps/run-api")
    expect(page.locator("h1")).to_have_text("Step 1 · Design the run API")
    expect(page.locator("nav.rail a[aria-current=step]")).to_have_text("1")


def test_htmx_is_installed_and_saves_decisions_in_place(server: str, page: Page) -> None:
    page.goto(server + "/steps/run-api")
    assert page.evaluate("typeof window.htmx") == "object", "static/vendor/htmx.min.js not served"
    page.evaluate("window.__same_document = true")
    page.get_by_label("202 Accepted with a run id, at once").check()
    page.get_by_role("button", name="Save decisions").click()
    expect(page.locator("#decisions .saved")).to_have_text("Saved.")
    assert page.evaluate("window.__same_document") is True, "the page reloaded instead of a swap"
    page.reload()
    expect(page.get_by_label("202 Accepted with a run id, at once")).to_be_checked()


def test_running_a_step_again_breaks_no_content_security_rule(server: str, page: Page) -> None:
    """The second run swaps charts over charts: htmx must not copy the old canvases' inline
    style onto the new ones (the CSP allows no inline style; Chromium logs each attempt)."""
    errors: list[str] = []
    page.on(
        "console", lambda message: errors.append(message.text) if message.type == "error" else None
    )
    page.goto(server + "/steps/worker-crash")
    run = page.get_by_role("button", name="Run the simulation")
    for attempt in (1, 2):
        run.click()
        expect(page.locator("#results canvas").first).to_be_visible(timeout=60_000)
        page.wait_for_timeout(500)
        assert page.locator("#results").count() == 1, f"run {attempt}"
    assert errors == []


def test_the_api_docs_render_from_this_site_under_the_strict_policy(
    server: str, page: Page
) -> None:
    """Swagger UI from static/vendor lists the API's operations; no request leaves the site and
    the Content-Security-Policy blocks nothing (Chromium logs each blocked load as an error)."""
    errors: list[str] = []
    elsewhere: list[str] = []
    page.on(
        "console", lambda message: errors.append(message.text) if message.type == "error" else None
    )
    page.on(
        "request",
        lambda request: None if request.url.startswith(server) else elsewhere.append(request.url),
    )
    page.goto(server + "/api/docs")
    expect(page.locator(".opblock-summary-path").first).to_be_visible(timeout=30_000)
    paths = page.locator(".opblock-summary-path").all_inner_texts()
    assert "/api/v1/grade" in [p.replace("\u200b", "") for p in paths]
    assert elsewhere == []
    assert errors == []
