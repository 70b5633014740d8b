"""Simulation results cached in ``sim_results``, keyed by design, scenario, seed and version.

The simulator gives byte-identical results for the same design, scenario, seed and simulator
version, so a result computed once is valid for every learner whose design hashes the same. The
cached JSON is ``simulator.simulate``'s output before pricing; grading prices it each time (the
cost model is cheap and follows the course's pricing catalog).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import select
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


def cached(session: Session, keys: Iterable[CacheKey]) -> dict[CacheKey, SimulationResult]:
    """The cached results among ``keys`` (missing keys are absent from the answer)."""
    wanted = list(keys)
    if not wanted:
        return {}
    rows = session.scalars(
        select(SimResult).where(
            SimResult.design_hash.in_({k.design_hash for k in wanted}),
            SimResult.simulator_version == SIMULATOR_VERSION,
        )
    )
    by_key = {
        CacheKey(r.design_hash, r.scenario_name, r.scenario_hash, r.seed, r.simulator_version): r
        for r in rows
    }
    return {
        key: SimulationResult.model_validate_json(by_key[key].result_json)
        for key in wanted
        if key in by_key
    }


def store(session: Session, key: CacheKey, result: SimulationResult) -> None:
    """Add ``result`` under ``key``; a row another request stored meanwhile is kept as it is.

    One ``INSERT ... ON CONFLICT DO NOTHING`` in the caller's transaction, so a lost race
    neither undoes nor commits the caller's other changes.
    """
    insert_unless_exists(
        session,
        SimResult,
        design_hash=key.design_hash,
        scenario_name=key.scenario_name,
        scenario_hash=key.scenario_hash,
        seed=key.seed,
        simulator_version=key.simulator_version,
        result_json=result.model_dump_json(),
    )
