"""In Chromium at 1280 x 800: the instructor's class page fits the window, and its sticky total
column never covers a step's column (the table scrolls within its own box when it must).

Screenshots are written to test-artifacts/class-1280.png (the page) and class-table-1280.png (the
class table) for a person to look at.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from app.accounts import create_user
from app.course.loader import load_course
from app.db import make_engine, make_sessionmaker, session_scope, upgrade
from app.models import CheckOutcome, Role
from app.progress import record_run
from tests.browser.chromium import CHROMIUM, CHROMIUM_ARGS
from tests.live_server import REPO, LiveServer

pytestmark = pytest.mark.browser

COURSE = load_course(REPO / "steps")
PASSWORD = "a long password"
INSTRUCTOR = "ina@example.com"
LEARNERS = (
    "a.learner-with-a-rather-long-name@engineering.university-example.edu",
    "bo@example.com",
    "cy.long-address@example.org",
)
ARTIFACTS = REPO / "test-artifacts"


def build_class(database_url: str) -> None:
    """An instructor and three learners who ran every step (points 0-10, up to 3 attempts),
    and first-time verdicts on every check, so the tables are as full as they get."""
    assert COURSE.course is not None
    course_id = COURSE.course.id
    upgrade(database_url)
    now = datetime.now(UTC)
    for session in session_scope(make_sessionmaker(make_engine(database_url))):
        create_user(session, INSTRUCTOR, Role.instructor, PASSWORD)
        for n, email in enumerate(LEARNERS):
            user = create_user(session, email, Role.learner, PASSWORD)
            for step in COURSE.steps:
                assert step.step is not None
                most = sum(c.points for c in step.step.checks)
                for attempt in range(1 + (n + step.number) % 3):
                    points = most - (step.number + n + attempt) % 4
                    record_run(
                        session, user.id, course_id, step.slug, points, most,
                        passed=points == most,
                    )  # fmt: skip
                for check in step.step.checks:
                    session.add(
                        CheckOutcome(
                            user_id=user.id, course_id=course_id, step_id=step.slug,
                            check_id=check.id, first_status="fail", first_at=now,
                            last_status="pass", last_at=now, attempts=2, failures=1,
                        )
                    )  # fmt: skip


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    workdir: Path = tmp_path_factory.mktemp("class-page")
    database = f"sqlite:///{workdir / 'designlab.sqlite3'}"
    build_class(database)
    live = LiveServer({"DATABASE_URL": database}, workdir / "server.log").start()
    yield live.url
    live.stop()


@pytest.fixture(scope="module")
def page(server: str) -> Iterator[Page]:
    with sync_playwright() as playwright:
        browser: Browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(base_url=server, viewport={"width": 1280, "height": 800})
        page = context.new_page()
        page.goto("/login")
        page.get_by_label("Email").fill(INSTRUCTOR)
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Sign in").click()
        page.goto("/instructor")
        page.wait_for_load_state("networkidle")
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "class-1280.png"), full_page=True)
        table = page.locator("section[aria-labelledby='table-heading']")
        table.screenshot(path=str(ARTIFACTS / "class-table-1280.png"))
        yield page
        browser.close()


def test_the_class_page_is_no_wider_than_a_1280_px_window(page: Page):
    width = page.evaluate("document.scrollingElement.scrollWidth")
    assert width <= 1280, f"the page is {width} px wide"


@pytest.mark.parametrize("number", [11, 12, 13])
def test_the_sticky_total_covers_no_step_column(page: Page, number: int):
    """Every cell of the step's column shows at its centre, above the sticky total."""
    total = page.locator("table.class-table thead th.total").bounding_box()
    assert total is not None
    cells = page.locator(f"table.class-table tr > :nth-child({number + 1})")
    assert cells.count() == 1 + len(LEARNERS)
    for i in range(cells.count()):
        cell = cells.nth(i)
        box = cell.bounding_box()
        assert box is not None
        assert box["x"] + box["width"] <= total["x"] + 0.5, f"step {number} runs under the total"
        on_top = cell.evaluate(
            "(el) => { const r = el.getBoundingClientRect();"
            " const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);"
            " return el === hit || el.contains(hit); }"
        )
        assert on_top, f"row {i}: step {number} is covered"
