"""Grading a learner's design for the browser: one step, or every step for the report card.

A grade needs the simulation of each scenario its steps name (the step's and any check's own).
Those come from the ``sim_results`` cache when the same design, scenario, seed and simulator
version ran before; the others are simulated off the event loop by :func:`simulate_off_loop`,
stored, and handed to the grader. Seeds are each scenario's own, as ``designlab grade`` uses them
by default, so the browser and the CLI give the same points for the same design.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import anyio
from sqlalchemy.orm import Session

from app import metrics, simpool
from app.course.content import LoadedStep
from app.errors import BadInput, Unavailable
from app.grading.grader import CourseMaterial, grade
from app.grading.result import GradeResult
from app.sim_cache import CacheKey, cache_key, cached, store
from simulator.design import Design
from simulator.result import SimulationResult
from simulator.scenario import Scenario

log = logging.getLogger(__name__)

RETRY_AFTER_INTERNAL_SECONDS = 30
"""Retry-After of a simulation that failed for a reason of designlab's own (logged)."""


async def simulate_off_loop(
    design: Design, scenario: Scenario, seed: int, client: str = simpool.ANONYMOUS
) -> SimulationResult:
    """``simulator.simulate(design, scenario, seed)`` in the app's process pool (app/simpool.py)
    for ``client`` (app.simpool.client_key), the event loop free meanwhile. The one place that
    decides where the web app's simulations run.

    Raises SimulationRefused (422) for a scenario over the size bound or too slow because of a
    named design field, Unavailable (503) when it could not run now, and whatever the simulator
    raises.
    """
    return await simpool.simulate(design, scenario, seed, client)


def scenario_names(material: CourseMaterial, steps: Sequence[LoadedStep]) -> list[str]:
    """Names of the course scenarios ``steps`` simulate (step and check scenarios), in order."""
    names: list[str] = []
    for loaded in steps:
        if loaded.step is None or not loaded.available:
            continue
        wanted = [loaded.step.scenario, *(c.scenario for c in loaded.step.checks)]
        for name in wanted:
            if name and name in material.loaded.scenarios and name not in names:
                names.append(name)
    return names


@dataclass
class Runs:
    """The simulations a grade reads, by scenario name, and the ones that failed (not cached)."""

    results: dict[str, SimulationResult] = field(default_factory=dict)
    failures: dict[str, Exception] = field(default_factory=dict)
    simulated: int = 0
    """How many of them were simulated now (the rest came from the cache)."""

    def refusal(self) -> BadInput | None:
        """The failures that are refusals for the design's own fields (each a BadInput naming
        them), as one BadInput; None when there are none."""
        refused = [e for e in self.failures.values() if isinstance(e, BadInput)]
        if not refused:
            return None
        if len(refused) == 1:
            return refused[0]
        detail = " ".join(e.detail for e in refused)
        return type(refused[0])(detail, [f for e in refused for f in e.fields])

    def unavailable(self) -> Unavailable | None:
        """The failure that means no grade could be given now (a dead worker, a busy pool, an
        internal error, logged here), as an Unavailable; None when every failure is a refusal."""
        for name, exc in self.failures.items():
            if isinstance(exc, Unavailable):
                return exc
            if not isinstance(exc, BadInput):
                log.error("simulating %s failed", name, exc_info=exc)
                return Unavailable(
                    f"The simulation of scenario {name!r} could not run because of an error of "
                    "designlab's own; it has been logged. Nothing was counted; try again in "
                    f"{RETRY_AFTER_INTERNAL_SECONDS} s.",
                    retry_after_seconds=RETRY_AFTER_INTERNAL_SECONDS,
                )
        return None


def _keys(design: Design, material: CourseMaterial, names: list[str]) -> dict[str, CacheKey]:
    scenarios = material.loaded.scenarios
    return {n: cache_key(design, n, scenarios[n], scenarios[n].seed) for n in names}


def cached_runs(
    session: Session,
    design: Design,
    material: CourseMaterial,
    steps: Sequence[LoadedStep],
    *,
    counted: bool = False,
) -> Runs | None:
    """The cached simulations ``steps`` need for ``design``, or None if any is not cached.

    ``counted``: a run that will simulate what is missing (then :func:`ensure_runs` counts the
    lookups) counts its hits here when everything was cached (/metrics' cache hit rate).
    """
    keys = _keys(design, material, scenario_names(material, steps))
    found = cached(session, keys.values())
    if len(found) < len(keys):
        return None
    if counted:
        metrics.count_cache_lookups(hits=len(found), misses=0)
    return Runs({name: found[key] for name, key in keys.items()})


async def ensure_runs(
    session: Session,
    design: Design,
    material: CourseMaterial,
    steps: Sequence[LoadedStep],
    client: str = simpool.ANONYMOUS,
) -> Runs:
    """Every simulation ``steps`` need for ``design``: cached ones read, the rest simulated off
    the event loop for ``client`` (app.simpool.client_key) and stored in the cache. A simulation
    that raises is kept in ``failures``, never raised: see Runs.refusal and Runs.unavailable.

    Commits ``session`` twice: after reading the cache, so no transaction or pooled connection is
    held while simulations run, and after storing the new results, so no row lock is held across
    a later await (two learners with the same design store the same key: on PostgreSQL the second
    insert waits for the first transaction, and waiting on the event loop would freeze it).
    """
    keys = _keys(design, material, scenario_names(material, steps))
    found = cached(session, keys.values())
    session.commit()
    metrics.count_cache_lookups(hits=len(found), misses=len(keys) - len(found))
    runs = Runs({name: found[key] for name, key in keys.items() if key in found})
    fresh: dict[CacheKey, SimulationResult] = {}
    for name, key in keys.items():
        if name in runs.results:
            continue
        scenario = material.loaded.scenarios[name]
        try:
            result = await simulate_off_loop(design, scenario, key.seed, client)
        except Exception as exc:  # the caller decides: Runs.refusal, Runs.unavailable
            runs.failures[name] = exc
            continue
        fresh[key] = result
        runs.results[name] = result
        runs.simulated += 1
    for key, result in fresh.items():
        store(session, key, result)
    session.commit()
    return runs


def grade_with_runs(
    design: Design, material: CourseMaterial, steps: Sequence[LoadedStep], runs: Runs
) -> GradeResult:
    """Grade ``design`` on ``steps`` only, reading the simulations from ``runs``.

    The same ``app.grading.grader.grade`` as the CLI, restricted to ``steps``: a GradeResult
    whose ``steps`` are these steps in order. A scenario in ``runs.failures`` makes its checks
    ``error``.
    """
    by_scenario = {id(material.loaded.scenarios[n]): n for n in scenario_names(material, steps)}

    def served(_design: Design, scenario: Scenario, _seed: int) -> SimulationResult:
        name = by_scenario[id(scenario)]
        if name in runs.failures:
            raise runs.failures[name]
        return runs.results[name]

    subset = CourseMaterial(replace(material.loaded, steps=tuple(steps)), material.pricing)
    return grade(design, subset, simulate=served)


async def grade_off_loop(
    design: Design, material: CourseMaterial, steps: Sequence[LoadedStep], runs: Runs
) -> GradeResult:
    """:func:`grade_with_runs` in a worker thread (checks and explanations take milliseconds,
    a whole course tens of them)."""
    return await anyio.to_thread.run_sync(grade_with_runs, design, material, steps, runs)
