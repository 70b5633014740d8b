"""Grading a learner's design for the browser: one step, or every step for the report card.

A grade needs the simulation of each scenario its steps name (the step's and any check's own),
each for the design that step judges (the learner's decisions up to it, the course's neutral
values for the rest: app.course.step_design).
Those come from the ``sim_results`` cache when the same design, scenario, seed and simulator
version ran before; the others are simulated off the event loop by :func:`simulate_off_loop`,
stored, and handed to the grader. Seeds are each scenario's own, as ``designlab grade`` uses them
by default, so the browser and the CLI give the same points for the same design.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

import anyio
from sqlalchemy.orm import Session

from app import metrics, simpool
from app.course.content import LoadedStep
from app.course.step_design import course_design, step_design
from app.errors import BadInput, Unavailable
from app.grading.grader import (
    CourseMaterial,
    Simulate,
    baseline_step,
    cost_scenario,
    design_sha256,
    grade,
    step_scenarios,
)
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
        for name in step_scenarios(material, loaded):
            if name not in names:
                names.append(name)
    return names


RunKey = tuple[str, str]
"""A simulation a grade reads: (the SHA-256 of the design it judges, the scenario's name)."""


def step_designs(
    design: Design, material: CourseMaterial, steps: Sequence[LoadedStep]
) -> dict[str, Design]:
    """Per step id, the design the step judges (the learner's decisions up to it, the course's
    neutral values for the rest: app.course.step_design)."""
    return {loaded.slug: step_design(material.loaded, loaded, design) for loaded in steps}


def wanted_runs(
    design: Design, material: CourseMaterial, steps: Sequence[LoadedStep]
) -> dict[RunKey, tuple[Design, str]]:
    """Every simulation grading ``steps`` for ``design`` reads: each step's design under each
    scenario the step names, once; and, for the whole course, ``design`` itself under the
    scenario its month is priced with (app.grading.grader.cost_scenario); and, for a check with
    a ``baseline_step``, the design that step judges under the check's scenario."""
    judged = step_designs(design, material, steps)
    out: dict[RunKey, tuple[Design, str]] = {}
    for loaded in steps:
        sha = design_sha256(judged[loaded.slug])
        for name in step_scenarios(material, loaded):
            out.setdefault((sha, name), (judged[loaded.slug], name))
        step = loaded.step if loaded.available else None
        for check in step.checks if step is not None else []:
            earlier = baseline_step(material, check)
            wanted = check.scenario or step.scenario if step is not None else None
            if earlier is None or wanted is None or wanted not in material.loaded.scenarios:
                continue
            base = step_design(material.loaded, earlier, design)
            out.setdefault((design_sha256(base), wanted), (base, wanted))
    priced = cost_scenario(material, steps)
    if priced is not None:
        whole = course_design(material.loaded, design)
        out.setdefault((design_sha256(whole), priced), (whole, priced))
    return out


def _shas(design: Design, material: CourseMaterial, steps: Sequence[LoadedStep]) -> dict[str, str]:
    return {k: design_sha256(v) for k, v in step_designs(design, material, steps).items()}


@dataclass
class Runs:
    """The simulations a grade reads, by :data:`RunKey`, and the ones that failed (not cached)."""

    results: dict[RunKey, SimulationResult] = field(default_factory=dict)
    failures: dict[RunKey, Exception] = field(default_factory=dict)
    simulated: int = 0
    """How many of them were simulated now (the rest came from the cache)."""
    step_designs: dict[str, str] = field(default_factory=dict)
    """Per step id, the SHA-256 of the design it judges."""

    def of_step(self, step_id: str, name: str | None) -> SimulationResult | None:
        """The run of scenario ``name`` for step ``step_id``'s design, or None."""
        sha = self.step_designs.get(step_id)
        if sha is None or name is None:
            return None
        return self.results.get((sha, name))

    def simulate(self, material: CourseMaterial) -> Simulate:
        """A ``simulate`` for the grader that hands out the run of the design and scenario it is
        asked for (by :data:`RunKey`), raising the failure kept for it instead."""
        names = {id(scenario): name for name, scenario in material.loaded.scenarios.items()}

        def served(judged: Design, scenario: Scenario, _seed: int) -> SimulationResult:
            key = (design_sha256(judged), names[id(scenario)])
            if key in self.failures:
                raise self.failures[key]
            return self.results[key]

        return served

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
        for (_, name), exc in self.failures.items():
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


def _keys(
    design: Design, material: CourseMaterial, steps: Sequence[LoadedStep]
) -> dict[RunKey, tuple[Design, str, CacheKey]]:
    scenarios = material.loaded.scenarios
    return {
        key: (judged, name, cache_key(judged, name, scenarios[name], scenarios[name].seed))
        for key, (judged, name) in wanted_runs(design, material, steps).items()
    }


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
    keys = _keys(design, material, steps)
    found = cached(session, [k for _, _, k in keys.values()])
    if len(found) < len(keys):
        return None
    if counted:
        metrics.count_cache_lookups(hits=len(found), misses=0)
    runs = Runs({key: found[cache] for key, (_, _, cache) in keys.items()})
    runs.step_designs = _shas(design, material, steps)
    return runs


async def ensure_runs(
    session: Session,
    design: Design,
    material: CourseMaterial,
    steps: Sequence[LoadedStep],
    client: str = simpool.ANONYMOUS,
) -> Runs:
    """Every simulation ``steps`` need for ``design`` (each step's own design: see
    :func:`wanted_runs`): cached ones read, the rest simulated off the event loop for ``client``
    (app.simpool.client_key) and stored in the cache. A simulation that raises is kept in
    ``failures``, never raised: see Runs.refusal and Runs.unavailable.

    Commits ``session`` twice: after reading the cache, so no transaction or pooled connection is
    held while simulations run, and after storing the new results, so no row lock is held across
    a later await (two learners with the same design store the same key: on PostgreSQL the second
    insert waits for the first transaction, and waiting on the event loop would freeze it).
    """
    keys = _keys(design, material, steps)
    found = cached(session, [k for _, _, k in keys.values()])
    session.commit()
    metrics.count_cache_lookups(hits=len(found), misses=len(keys) - len(found))
    runs = Runs({key: found[cache] for key, (_, _, cache) in keys.items() if cache in found})
    runs.step_designs = _shas(design, material, steps)
    fresh: dict[CacheKey, SimulationResult] = {}
    for key, (judged, name, cache) in keys.items():
        if key in runs.results:
            continue
        scenario = material.loaded.scenarios[name]
        try:
            result = await simulate_off_loop(judged, scenario, cache.seed, client)
        except Exception as exc:  # the caller decides: Runs.refusal, Runs.unavailable
            runs.failures[key] = exc
            continue
        fresh[cache] = result
        runs.results[key] = result
        runs.simulated += 1
    for cache, result in fresh.items():
        store(session, cache, result)
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
    return grade(design, material, simulate=runs.simulate(material), only=steps)


async def grade_off_loop(
    design: Design, material: CourseMaterial, steps: Sequence[LoadedStep], runs: Runs
) -> GradeResult:
    """:func:`grade_with_runs` in a worker thread (checks and explanations take milliseconds,
    a whole course tens of them)."""
    return await anyio.to_thread.run_sync(grade_with_runs, design, material, steps, runs)
