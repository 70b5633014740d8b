"""A run pauses Python's cyclic garbage collector and leaves it as it found it."""

from __future__ import annotations

import gc

import pytest

import simulator.simulation as simulation
from simulator import simulate
from simulator.design import Design
from simulator.scenario import Scenario


def test_the_collector_is_off_during_a_run_and_on_after_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[bool] = []
    run = simulation.Assembly.run

    def spy(self: simulation.Assembly):  # type: ignore[no-untyped-def]
        seen.append(gc.isenabled())
        return run(self)

    monkeypatch.setattr(simulation.Assembly, "run", spy)
    assert gc.isenabled()
    scenario = Scenario.model_validate({"name": "short", "duration_seconds": 60})
    result = simulate(Design(), scenario, 1)
    assert result.metrics.arrivals > 0
    assert seen == [False]
    assert gc.isenabled()


def test_a_collector_found_off_stays_off_and_an_error_turns_it_back_on() -> None:
    gc.disable()
    try:
        with simulation.collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(ValueError), simulation.collector_paused():
        raise ValueError("a run failed")
    assert gc.isenabled()


def test_nested_pauses_turn_it_on_when_the_outer_one_ends() -> None:
    with simulation.collector_paused():
        with simulation.collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
