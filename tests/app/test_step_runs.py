"""Grading for the browser: which scenarios a step needs, cached runs, failures as errors."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from app.db import make_engine, make_sessionmaker, upgrade
from app.grading.grader import design_sha256, grade, load_material
from app.step_runs import cached_runs, ensure_runs, grade_with_runs, scenario_names
from simulator.design import Design
from tests.factories import write
from tests.web.learner_course import write_learner_course


@pytest.fixture
def material(tmp_path: Path):
    root = write_learner_course(tmp_path / "course")
    step = (root / "02-event-log" / "step.yaml").read_text()
    write(root / "02-event-log" / "step.yaml", step.replace(
        "    concept: dedupe\n", "    concept: dedupe\n    scenario: peak\n"
    ))  # fmt: skip
    return load_material(root)


def test_a_step_needs_its_scenario_and_its_checks_in_order_without_repeats(material):
    steps = material.loaded.steps
    assert scenario_names(material, steps[1:2]) == ["crash", "peak"]
    assert scenario_names(material, steps) == ["peak", "crash"]
    assert scenario_names(material, steps[2:]) == []


def test_runs_are_simulated_once_and_graded_as_the_cli_grades(material, database_url):
    upgrade(database_url)
    factory = make_sessionmaker(make_engine(database_url))
    design = Design()
    steps = material.loaded.steps
    with factory() as session:
        assert cached_runs(session, design, material, steps) is None
        runs = asyncio.run(ensure_runs(session, design, material, steps))
        session.commit()
        scenarios = sorted(name for _, name in runs.results)
        assert (scenarios, runs.simulated, runs.failures) == (["crash", "peak"], 2, {})
        # keyed by the SHA-256 of the design each step judges (with no reference design in
        # this course, the design itself for every step)
        assert {sha for sha, _ in runs.results} == set(runs.step_designs.values())
    with factory() as session:
        again = cached_runs(session, design, material, steps)
        assert again is not None and again.results == runs.results
    ours = grade_with_runs(design, material, steps, runs)
    assert ours.model_dump() == grade(design, material).model_dump()


def test_a_simulation_that_raises_makes_its_checks_errors_and_is_not_cached(
    material, database_url, monkeypatch
):
    upgrade(database_url)
    factory = make_sessionmaker(make_engine(database_url))

    async def broken(design, scenario, seed, client):
        raise RuntimeError("worker died")

    monkeypatch.setattr("app.step_runs.simulate_off_loop", broken)
    step = material.loaded.steps[1:2]
    with factory() as session:
        runs = asyncio.run(ensure_runs(session, Design(), material, step))
        session.commit()
        assert {name for _, name in runs.failures} == {"crash", "peak"} and runs.results == {}
        assert cached_runs(session, Design(), material, step) is None
    graded = grade_with_runs(Design(), material, step, runs)
    (result,) = graded.steps
    assert result.status == "error"
    assert "worker died" in result.message


def test_a_step_judges_the_earlier_steps_decisions_as_the_whole_course_does(database_url):
    """A learner whose step-2 value differs from the reference runs step 3 alone: its checks
    read the runs of the design step 3 judges (the learner's values of steps 1-3), the same
    design as in a grade of the whole course, not the reference's step-2 value (which found no
    run: every simulated check an error)."""
    material = load_material(Path(__file__).resolve().parents[2] / "steps")
    reference = material.loaded.reference_design
    assert reference is not None
    data = reference.model_dump(mode="json")
    data["data_model"]["outbox_relay_poll_interval_ms"] = 1000  # decided in step 2
    design = Design.model_validate(data)
    step = [s for s in material.loaded.steps if s.number == 3]
    upgrade(database_url)
    factory = make_sessionmaker(make_engine(database_url))
    with factory() as session:
        runs = asyncio.run(ensure_runs(session, design, material, step))
        session.commit()
    assert runs.failures == {}
    graded = grade_with_runs(design, material, step, runs)
    checks = [c for s in graded.steps for c in s.checks]
    assert checks and all(c.status != "error" for c in checks), [c.message for c in checks]
    whole = grade(design, material)
    assert graded.steps[0].model_dump() == whole.steps[2].model_dump()


def test_the_whole_course_bills_the_design_it_judged(database_url):
    """The report card grades every step and prices the design as the course judges it: a field
    no step decides (here the state store's replicas: each step of the fixture course judges the
    reference's 2) is billed at the course's value too, so the bill's run is one a step already
    ran and nothing more is simulated; the grade lists the field it did not judge."""
    material = load_material(Path(__file__).resolve().parents[1] / "grading/fixtures/simulated")
    reference = material.loaded.reference_design
    assert reference is not None
    store = reference.state_store.model_copy(update={"replicas": 0})
    design = reference.model_copy(update={"state_store": store})
    steps = material.loaded.steps
    upgrade(database_url)
    factory = make_sessionmaker(make_engine(database_url))
    with factory() as session:
        one = asyncio.run(ensure_runs(session, design, material, steps[:1]))
        runs = asyncio.run(ensure_runs(session, design, material, steps))
        session.commit()
    assert (one.simulated, runs.simulated) == (1, 0)
    assert (design_sha256(design), "tiny") not in runs.results
    graded = grade_with_runs(design, material, steps, runs)
    assert graded.model_dump() == grade(design, material).model_dump()
    assert graded.cost is not None and graded.cost.by_component["database_replicas"] > 0
    assert graded.not_judged == ["state_store.replicas: 0 in the file, 2 judged"]
    assert grade_with_runs(design, material, steps[:1], one).cost is None
