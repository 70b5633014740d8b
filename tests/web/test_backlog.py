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

NOTE = (
    "still draining at the end of the window: 73 events above normal; at 13.1/s of headroom "
    "about 6 s more"
)
"""The simulator's note for the reference design (43 % utilised) under the broker loss, whose
lag held level at about 135 events over the last minute (simulator 1.3.0)."""


@pytest.fixture(scope="module")
def broker_loss() -> SimulationResult:
    """The reference design under the course's broker loss (a fault from 120 s to 420 s of
    480 s), its drain figures set as the simulator gave them when this was found."""
    material = load_material(REPO_STEPS)
    scenario = material.loaded.scenarios["broker-loss"]
    design = load_design(Path(REPO_STEPS / "designs" / "reference.yaml"))
    result = run_scenario(design, scenario, scenario.seed, material)
    metrics = result.metrics.model_copy(update={"drain_seconds": None, "drain_note": NOTE})
    return result.model_copy(update={"metrics": metrics})


def with_tail(result: SimulationResult, tail: list[int]) -> SimulationResult:
    """``result`` with the last ``len(tail)`` samples of its total lag replaced."""
    lag = list(result.timeseries.lag_total)
    timeseries = result.timeseries.model_copy(update={"lag_total": lag[: -len(tail)] + tail})
    return result.model_copy(update={"timeseries": timeseries})


LEVEL = [130, 133, 132, 134, 129, 138, 132, 132, 135, 132, 142, 135, 138, 136, 130] * 2
"""A lag holding level with its sampling noise: the reference design's last 15 samples, twice."""


def test_a_lag_that_stopped_falling_is_shown_as_no_backlog_left(broker_loss):
    steady = with_tail(broker_loss, LEVEL)
    assert not lag_still_falling(steady)
    seconds, note = shown_drain(steady)
    assert seconds is None and note is not None and note.startswith(STEADY)
    assert "held at about 136 step events at the end" in note
    assert "before the fault" in note
    assert drain(seconds, note) == "no backlog left"


def test_a_lag_still_falling_at_the_end_is_still_draining(broker_loss):
    draining = with_tail(broker_loss, [400 - 12 * i for i in range(30)])
    assert lag_still_falling(draining)
    seconds, note = shown_drain(draining)
    assert note == NOTE
    assert drain(seconds, note) == "still draining at the end"
