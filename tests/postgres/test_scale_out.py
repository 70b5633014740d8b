"""Two app processes on one PostgreSQL database serve the same learner, request by request in
turn, without losing progress; they start together on an empty database (migrations take turns);
and two saves from the same page version sent to both at once give one save and one conflict.

Needs DATABASE_URL_TEST (``.ci/run`` starts a server); skipped without it.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from sqlalchemy import create_engine, func, select

from app.models import DesignRecord, StepProgress, User
from tests.crash.learners import FIELD, STEP, form_fields
from tests.live_server import LiveServer
from tests.web.html import csrf_of, soup

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

SAVES = 20


@pytest.fixture
def two_instances(postgres_databases, tmp_path: Path):
    """Two servers started at the same moment on one new, empty database."""
    url = postgres_databases.create(migrated=False)
    servers = [LiveServer({"DATABASE_URL": url}, tmp_path / f"app-{i}.log") for i in (1, 2)]
    with ThreadPoolExecutor(2) as pool:
        started = [pool.submit(server.start) for server in servers]
        try:
            for future in started:
                future.result()
        except Exception:
            for server in servers:
                server.stop()
            raise
    yield url, servers
    for server in servers:
        server.stop()
    postgres_databases.drop(url)


def on(server: LiveServer, path: str) -> str:
    return server.url + path


def test_one_learner_alternating_between_two_instances_keeps_every_save(two_instances):
    url, (a, b) = two_instances
    with httpx.Client(timeout=60, follow_redirects=False) as browser:
        form = form_fields(browser.get(on(a, f"/steps/{STEP}")).text)
        for i in range(SAVES):
            here, there = (a, b) if i % 2 == 0 else (b, a)
            saved = browser.post(
                on(here, f"/steps/{STEP}"),
                data={**form, FIELD: str(100 + i)},
                headers={"HX-Request": "true"},
            )
            assert saved.status_code == 200, f"save {i} on {here.url}: {saved.status_code}"
            form = form_fields(browser.get(on(there, f"/steps/{STEP}")).text)
            assert (form["design_version"], form[FIELD]) == (str(i + 1), str(100 + i)), (
                f"save {i} made on {here.url} is not what {there.url} shows"
            )

        token = csrf_of(soup(browser.get(on(b, "/signup"))))
        account = {"csrf_token": token, "email": "ana@example.com", "password": "a long password"}
        assert browser.post(on(b, "/signup"), data=account).status_code == 303
        form = form_fields(browser.get(on(b, f"/steps/{STEP}")).text)  # a new session's token
        run = browser.post(on(a, f"/steps/{STEP}/run"), data=form, headers={"HX-Request": "true"})
        assert run.status_code == 200
        overview = soup(browser.get(on(b, "/")))
        badge = overview.select_one(f'li.step-item[data-step="{STEP}"] .badge')
        assert badge is not None and badge.get_text(strip=True) != "not started"

    engine = create_engine(url)
    with engine.connect() as conn:
        (version,) = conn.execute(select(DesignRecord.version)).one()
        users = conn.execute(select(func.count()).select_from(User)).scalar_one()
        progress = conn.execute(
            select(StepProgress.attempts).where(StepProgress.step_id == STEP)
        ).scalar_one()
    engine.dispose()
    assert version == SAVES
    assert users == 1, "the guest became the account on the other instance: one user"
    assert progress == 1


def test_two_instances_settle_simultaneous_saves_from_one_page_version(two_instances):
    _, (a, b) = two_instances

    async def rounds() -> list[list[int]]:
        async with httpx.AsyncClient(timeout=60) as browser:
            page = await browser.get(on(a, f"/steps/{STEP}"))
            first = await browser.post(
                on(a, f"/steps/{STEP}"), data={**form_fields(page.text), FIELD: "1"},
                headers={"HX-Request": "true"},
            )  # fmt: skip
            assert first.status_code == 200
            outcomes = []
            for i in range(10):
                form = form_fields((await browser.get(on(b, f"/steps/{STEP}"))).text)
                both = await asyncio.gather(
                    *(
                        browser.post(
                            on(server, f"/steps/{STEP}"),
                            data={**form, FIELD: str(100 + 10 * i + n)},
                            headers={"HX-Request": "true"},
                        )
                        for n, server in enumerate((a, b))
                    )
                )
                outcomes.append(sorted(r.status_code for r in both))
            return outcomes

    assert asyncio.run(rounds()) == [[200, 409]] * 10
