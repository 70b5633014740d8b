""""Still draining" is said only while a backlog remains: the lag still falling at the end."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.grading.grader import load_material, run_scenario
from app.web.backlog import STEADY, lag_still_falling, shown_drain
from app.web.formatting import drain
from simulator.files import load_design
from simulator.result import SimulationResult
from tests.factories import REPO_STEPS


@pytest.fixture(scope="module")
def broker_loss() -> SimulationResult:
    """The reference design (43 % utilised) under the course's broker loss: the simulator's note
    says "still draining" although the lag holds level over the last minute."""
    material = load_material(REPO_STEPS)
    scenario = material.loaded.scenarios["broker-loss"]
    design = load_design(Path(REPO_STEPS / "designs" / "reference.yaml"))
    return run_scenario(design, scenario, scenario.seed, material)


def with_lag(result: SimulationResult, lag: list[int]) -> SimulationResult:
    timeseries = result.timeseries.model_copy(update={"lag_total": lag})
    return result.model_copy(update={"timeseries": timeseries})


def test_a_lag_that_stopped_falling_is_shown_as_no_backlog_left(broker_loss):
    assert (broker_loss.metrics.drain_note or "").startswith("still draining")
    seconds, note = shown_drain(broker_loss)
    assert seconds is None and note is not None and note.startswith(STEADY)
    assert drain(seconds, note) == "no backlog left"
    assert "before the fault" in note


def test_a_lag_still_falling_at_the_end_is_still_draining(broker_loss):
    lag = list(broker_loss.timeseries.lag_total)
    falling = lag[:-20] + [400 - 15 * i for i in range(20)]
    draining = with_lag(broker_loss, falling)
    assert lag_still_falling(draining)
    seconds, note = shown_drain(draining)
    assert note == broker_loss.metrics.drain_note
    assert drain(seconds, note) == "still draining at the end"
