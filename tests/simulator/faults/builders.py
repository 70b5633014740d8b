"""Designs, scenarios and runs for the fault tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from simulator.design import Design
from simulator.engine import Workload, make_rngs
from simulator.engine.workload import build_workload
from simulator.files import load_design, load_scenario
from simulator.result import SimulationResult
from simulator.scenario import Scenario
from simulator.simulation import Assembly, assemble

STEPS = Path(__file__).resolve().parents[3] / "steps"

UNLIMITED_MODEL = {"rpm": 1_000_000, "tpm": 10_000_000_000, "max_concurrency": 10_000}


def merged(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``extra`` merged in, nested dicts merged key by key."""
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merged(out[key], value)
        else:
            out[key] = value
    return out


def design(**sections: Any) -> Design:
    """A small durable design (commit after processing, durable dedupe, unlimited model) with
    ``sections`` merged in."""
    base: dict[str, Any] = {
        "event_log": {"partitions": 8, "partition_key": "event_id"},
        "delivery": {"commit": "after_processing", "dedupe": "durable_same_transaction"},
        "consumers": {"agent": {"instances": 2, "concurrency_per_instance": 4}},
        "model": {"primary": UNLIMITED_MODEL},
    }
    return Design.model_validate(merged(base, sections))


def reference(**changes: Any) -> Design:
    """The course's reference design with ``changes`` merged in."""
    ref = load_design(STEPS / "designs" / "reference.yaml")
    return Design.model_validate(merged(ref.model_dump(mode="json"), changes))


def known_bad(name: str) -> Design:
    """A known-bad design of the course (``steps/designs/bad/NAME.yaml``)."""
    return load_design(STEPS / "designs" / "bad" / f"{name}.yaml")


def course_scenario(name: str, **changes: Any) -> Scenario:
    """A scenario of the course (``steps/scenarios/NAME.yaml``) with ``changes`` merged in."""
    scenario = load_scenario(STEPS / "scenarios" / f"{name}.yaml")
    return Scenario.model_validate(merged(scenario.model_dump(mode="json"), changes))


def scenario(faults: list[dict[str, Any]] | None = None, **fields: Any) -> Scenario:
    """A scenario named "t" with ``faults`` and other fields."""
    return Scenario.model_validate({"name": "t", "faults": faults or [], **fields})


def single_stage(
    rate: float,
    duration: float,
    step_s: float,
    faults: list[dict[str, Any]] | None = None,
    *,
    deterministic: bool = True,
) -> Scenario:
    """``rate`` step events/s straight into the agent group, constant ``step_s`` steps."""
    return scenario(
        faults,
        duration_seconds=duration,
        deterministic=deterministic,
        load={
            "runs_per_second": None,
            "step_events_per_second": rate,
            "arrivals": "even" if deterministic else "poisson",
            "step_time": {"agent_step": {"distribution": "constant", "mean_seconds": step_s}},
        },
    )


def build(d: Design, s: Scenario, seed: int | None = None) -> Assembly:
    """The simulation ``simulate`` would run (workload from the scenario), assembled."""
    seed = s.seed if seed is None else seed
    workload_rng, _ = make_rngs(seed)
    return assemble(d, s, build_workload(d, s, workload_rng), seed)


def run(d: Design, s: Scenario, seed: int | None = None) -> tuple[Assembly, SimulationResult]:
    """Build and run a simulation; returns it (for the fault layers' state) and its result."""
    sim = build(d, s, seed)
    return sim, sim.run()


def run_arrays(
    d: Design, workload: Workload, faults: list[dict[str, Any]] | None = None, seed: int = 1
) -> tuple[Assembly, SimulationResult]:
    """Run an explicit workload under ``faults``."""
    sim = assemble(d, scenario(faults), workload, seed)
    return sim, sim.run()
