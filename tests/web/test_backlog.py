""" "Still draining" is said only while the lag is still falling at the end; a lag not falling at
the end, above normal, is "not back to normal", never "no backlog left"."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.grading.grader import load_material, run_scenario
from app.web.backlog import STEADY, lag_still_falling, shown_drain
from app.web.charts import lag_chart
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


def test_a_lag_level_above_normal_at_the_end_is_not_back_to_normal(broker_loss):
    """Level at the end far above its level before the fault: neither "still draining" nor "no
    backlog left" (the starting design of the course at step 4 stood at 261 where it held 117)."""
    steady = with_tail(broker_loss, LEVEL)
    assert not lag_still_falling(steady)
    seconds, note = shown_drain(steady)
    assert seconds is None and note is not None and note.startswith(STEADY)
    ts = broker_loss.timeseries
    early = [lag for t, lag in zip(ts.t_s, ts.lag_total, strict=True) if t < 120.0]
    before = sum(early) / len(early)  # the samples before the broker is lost at 120 s
    assert note == (
        "not back to normal: the lag was not falling at the end and stood at about 136 step "
        f"events ({before:,.0f} before the fault)"
    )
    assert drain(seconds, note) == "not back to normal"
    summary = lag_chart(steady).summary
    assert summary.endswith(
        "Lag was not back to normal by the end of the run: the lag was not falling at the end "
        f"and stood at about 136 step events ({before:,.0f} before the fault)."
    )
    assert "no backlog left" not in summary


def test_a_lag_still_falling_at_the_end_is_still_draining(broker_loss):
    draining = with_tail(broker_loss, [400 - 12 * i for i in range(30)])
    assert lag_still_falling(draining)
    seconds, note = shown_drain(draining)
    assert note == NOTE
    assert drain(seconds, note) == "still draining at the end"
