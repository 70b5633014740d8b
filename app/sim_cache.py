"""Simulation results cached in ``sim_results``, keyed by design, scenario, seed and version.

The simulator gives byte-identical results for the same design, scenario, seed and simulator
version, so a result computed once is valid for every learner whose design hashes the same. The
cached JSON is ``simulator.simulate``'s output before pricing; grading prices it each time (the
cost model is cheap and follows the course's pricing catalog).
"""

from __future__ import annotations

import hashlib
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from app.db import insert_unless_exists
from app.grading.grader import design_sha256
from app.models import SimResult
from simulator import SIMULATOR_VERSION
from simulator.design import Design
from simulator.result import SimulationResult
from simulator.scenario import Scenario


@dataclass(frozen=True)
class CacheKey:
    """What makes two simulations the same: design and scenario hashes, seed, simulator version."""

    design_hash: str
    scenario_name: str
    scenario_hash: str
    seed: int
    simulator_version: str = SIMULATOR_VERSION


def scenario_sha256(scenario: Scenario) -> str:
    """SHA-256 hex of the scenario's canonical JSON, so an edited scenario misses the cache."""
    return hashlib.sha256(scenario.model_dump_json().encode("utf-8")).hexdigest()


def cache_key(design: Design, name: str, scenario: Scenario, seed: int) -> CacheKey:
    """The key of simulating ``design`` under the scenario called ``name`` with ``seed``."""
    return CacheKey(design_sha256(design), name, scenario_sha256(scenario), seed)


RECENT_PER_DATABASE = 256
"""Results kept in this process per database, most recently used first (about 11 kB each)."""

_recent: weakref.WeakKeyDictionary[Engine, OrderedDict[CacheKey, SimulationResult]] = (
    weakref.WeakKeyDictionary()
)
_recent_lock = threading.Lock()


def _recall(session: Session, keys: list[CacheKey]) -> dict[CacheKey, SimulationResult]:
    with _recent_lock:
        recent = _recent.get(session.get_bind().engine)
        if recent is None:
            return {}
        found = {k: recent[k] for k in keys if k in recent}
        for key in found:
            recent.move_to_end(key)
        return found


def _remember(session: Session, results: dict[CacheKey, SimulationResult]) -> None:
    with _recent_lock:
        recent = _recent.setdefault(session.get_bind().engine, OrderedDict())
        for key, result in results.items():
            recent[key] = result
            recent.move_to_end(key)
        while len(recent) > RECENT_PER_DATABASE:
            recent.popitem(last=False)


def cached(session: Session, keys: Iterable[CacheKey]) -> dict[CacheKey, SimulationResult]:
    """The cached results among ``keys`` (missing keys are absent from the answer).

    A result is the same for its key for ever, so the last RECENT_PER_DATABASE results read or
    stored are kept in this process beside the table (a learner re-running a step reads the
    same key again); the rest are read from ``sim_results``.
    """
    wanted = list(keys)
    if not wanted:
        return {}
    found = _recall(session, wanted)
    missing = [key for key in wanted if key not in found]
    if not missing:
        return found
    rows = session.scalars(
        select(SimResult).where(
            SimResult.design_hash.in_({k.design_hash for k in missing}),
            SimResult.simulator_version == SIMULATOR_VERSION,
        )
    )
    by_key = {
        CacheKey(r.design_hash, r.scenario_name, r.scenario_hash, r.seed, r.simulator_version): r
        for r in rows
    }
    read = {
        key: SimulationResult.model_validate_json(by_key[key].result_json)
        for key in missing
        if key in by_key
    }
    _remember(session, read)
    return {key: found.get(key) or read[key] for key in wanted if key in found or key in read}


def store(session: Session, key: CacheKey, result: SimulationResult) -> None:
    """Add ``result`` under ``key``; a row another request stored meanwhile is kept as it is.

    One ``INSERT ... ON CONFLICT DO NOTHING`` in the caller's transaction, so a lost race
    neither undoes nor commits the caller's other changes.
    """
    inserted = insert_unless_exists(
        session,
        SimResult,
        design_hash=key.design_hash,
        scenario_name=key.scenario_name,
        scenario_hash=key.scenario_hash,
        seed=key.seed,
        simulator_version=key.simulator_version,
        result_json=result.model_dump_json(),
    )
    if inserted:
        _remember(session, {key: result})
