"""SIGKILL the server while 200 learners save at once: after a restart every acknowledged save is
there, and no design is half-written (each is wholly the old one or wholly the new one, with the
version that goes with it, and its YAML loads).

Phase 1 gives each of the 200 learners a saved design (version 1, partitions 1000 + i). Phase 2
fires the second saves (partitions 2000 + i) of the first KILL_AFTER_ACKS learners at once and
waits for every acknowledgement; then it arms the server's hold (tests/crash/held_saves.py: a
transaction that updated a design waits just before its COMMIT), fires the other learners'
second saves at once, and kills the server as soon as one is held there: saves are in flight at
the kill by construction, not by a race with the clock, so the test passes under any load. Runs
on SQLite and, when DATABASE_URL_TEST is set, on PostgreSQL.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, func, select

from app.models import DesignRecord, StepProgress
from simulator.design import Design
from simulator.files import load_model
from tests.crash.held_saves import ARMED, HELD_PREFIX, HOLD_ENV
from tests.crash.learners import FIELD, STEP, Learner
from tests.live_server import LiveServer

pytestmark = pytest.mark.slow

LEARNERS = 200
KEEPALIVE_S = 1.0
"""Seconds a learner's idle connection is kept for its next request (see with_learners)."""
KILL_AFTER_ACKS = 50
"""Second saves acknowledged before the hold is armed; the others are in flight at the kill."""
HELD_FACTORY = "tests.crash.held_saves:create_app"


async def each(learners: list[Learner], work: Callable[[Learner], Awaitable[Any]], at_once: int):
    """Run ``work`` for every learner, ``at_once`` at a time; returns the results in order."""
    gate = asyncio.Semaphore(at_once)

    async def one(learner: Learner) -> Any:
        async with gate:
            return await work(learner)

    return await asyncio.gather(*(one(learner) for learner in learners))


def page_state(form: dict[str, str]) -> tuple[int, int]:
    """(design version, partitions) as the learner's step page shows them."""
    return int(form["design_version"]), int(form[FIELD])


async def wait_for_held(hold: Path, timeout_s: float = 120) -> int:
    """Wait until the server holds at least one save before its COMMIT; returns how many."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        held = len(list(hold.glob(f"{HELD_PREFIX}*")))
        if held:
            return held
        await asyncio.sleep(0.05)
    raise AssertionError(f"no save reached the hold in {timeout_s:g} s")


async def crash_during_saves(
    server: LiveServer, hold: Path, learners: list[Learner]
) -> dict[str, set[int]]:
    """Phases 1 and 2 against ``server``; returns who got an acknowledgement, who did not, and
    how many saves the server held before their COMMIT at the kill."""
    await each(learners, Learner.open_step, 20)
    first = await each(learners, lambda ln: ln.save(1000 + ln.number), 20)
    refused = [(n, r.status_code) for n, r in enumerate(first) if r.status_code != 200]
    assert not refused, f"first saves refused {refused}; server log:\n{server.log_tail()}"
    assert {page_state(ln.form) for ln in learners} == {(1, 1000 + ln.number) for ln in learners}

    acked: set[int] = set()
    failed: set[int] = set()

    async def second_save(learner: Learner) -> None:
        try:
            response = await learner.save(2000 + learner.number)
        except httpx.TransportError:
            failed.add(learner.number)
            return
        if 200 <= response.status_code < 300:
            acked.add(learner.number)
        else:
            failed.add(learner.number)

    before, during = learners[:KILL_AFTER_ACKS], learners[KILL_AFTER_ACKS:]
    await asyncio.gather(*(second_save(ln) for ln in before))
    assert acked == {ln.number for ln in before}, f"server log:\n{server.log_tail()}"
    (hold / ARMED).touch()
    saves = asyncio.gather(*(second_save(ln) for ln in during))
    held = await wait_for_held(hold)
    server.kill()
    await saves
    return {"acked": acked, "failed": failed, "held": {held}}


async def with_learners(
    url: str, cookies: list[httpx.Cookies], work: Callable[..., Awaitable[Any]]
) -> Any:
    """Run ``work(learners)`` with one client per cookie jar (one connection each); the jars keep
    the cookies the server set, for a later round.

    A client drops a connection idle for KEEPALIVE_S, well before the server's keep-alive
    timeout (uvicorn: 5 s): otherwise a save sent on a connection the server is closing at that
    moment fails with a read error, which is the client's race, not a lost save."""
    limits = httpx.Limits(max_connections=1, keepalive_expiry=KEEPALIVE_S)
    clients = [
        httpx.AsyncClient(base_url=url, timeout=60, cookies=jar, limits=limits) for jar in cookies
    ]
    try:
        return await work([Learner(i, client) for i, client in enumerate(clients)])
    finally:
        for jar, client in zip(cookies, clients, strict=True):
            jar.update(client.cookies)
        await asyncio.gather(*(c.aclose() for c in clients))


async def read_back(learners: list[Learner]) -> list[tuple[int, int]]:
    """Each learner's (version, partitions) as their step page shows them."""
    return [page_state(form) for form in await each(learners, Learner.open_step, 20)]


def test_acknowledged_saves_survive_a_sigkill_and_none_is_half_written(database_url, tmp_path):
    cookies = [httpx.Cookies() for _ in range(LEARNERS)]
    hold = tmp_path / "hold"
    hold.mkdir()
    env = {"DATABASE_URL": database_url, HOLD_ENV: str(hold)}
    server = LiveServer(env, tmp_path / "server.log", factory=HELD_FACTORY).start()
    try:
        outcome = asyncio.run(
            with_learners(server.url, cookies, lambda ls: crash_during_saves(server, hold, ls))
        )
    finally:
        server.kill()
    acked, failed = outcome["acked"], outcome["failed"]
    (held,) = outcome["held"]
    assert acked == set(range(KILL_AFTER_ACKS))
    assert held >= 1, "no save was in flight at the kill"
    assert failed == set(range(KILL_AFTER_ACKS, LEARNERS))

    restarted = LiveServer({"DATABASE_URL": database_url}, tmp_path / "restarted.log").start()
    try:
        states = asyncio.run(with_learners(restarted.url, cookies, read_back))
    finally:
        restarted.stop()

    for number, (version, partitions) in enumerate(states):
        old, new = (1, 1000 + number), (2, 2000 + number)
        if number in acked:
            assert (version, partitions) == new, f"learner {number}: acknowledged save lost"
        else:  # its UPDATE, if it ran, was never committed: wholly the old design
            assert (version, partitions) == old, f"learner {number}: uncommitted save kept"

    engine = create_engine(database_url)
    with engine.connect() as conn:
        rows = conn.execute(select(DesignRecord.version, DesignRecord.yaml_text)).all()
        progress = conn.execute(
            select(func.count()).select_from(StepProgress).where(StepProgress.step_id == STEP)
        ).scalar_one()
    engine.dispose()
    assert len(rows) == LEARNERS
    assert progress == LEARNERS
    for version, yaml_text in rows:
        design = load_model(Design, yaml_text, "design.yaml")
        assert (version, design.event_log.partitions - 1000 * version) in {
            (v, p) for v in (1, 2) for p in range(LEARNERS)
        }
    report = {"learners": LEARNERS, "acknowledged": len(acked), "cut": len(failed), "held": held}
    print(json.dumps(report))
