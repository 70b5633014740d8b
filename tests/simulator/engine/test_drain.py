"""An overloaded design never drains (simulator.engine.metrics.drain): its lag climbs from the
start, so the spread of the climbing lag before the fault is no normal band to come back to."""

from __future__ import annotations

import numpy as np

from simulator.engine.metrics import drain


def test_an_overloaded_design_never_drains_even_when_its_lag_falls_inside_the_band() -> None:
    # The starting design of the course at step 8: capacity 4/s against 25/s of arrivals, a
    # worker crash from 240 s to 420 s; the lag climbs from the start (about 2.5 events/s), and
    # right after the restart it is back within mean + 3 sd of the climbing lag before the crash.
    t = np.linspace(0.0, 1000.0, 301)
    lag = 2.5 * t
    lag[(t >= 420.0) & (t < 480.0)] = 550.0
    d = drain(t, lag, [(240.0, 420.0)], 3.98, 25.0, ["worker_crash"])
    assert d.drain_seconds is None
    assert d.note == "never drains: capacity 4.0/s < arrivals 25.0/s"


def test_a_design_with_headroom_still_drains_after_the_fault() -> None:
    t = np.linspace(0.0, 600.0, 181)
    lag = np.full(t.size, 20.0)
    lag[(t >= 200.0) & (t < 300.0)] = 500.0
    d = drain(t, lag, [(200.0, 260.0)], 40.0, 25.0, ["worker_crash"])
    assert d.drain_seconds is not None and 39.0 <= d.drain_seconds <= 41.0
    assert d.note is None


def test_work_released_after_the_fault_is_drained_before_the_lag_counts_as_normal() -> None:
    """Producers a broker loss blocked send what they held once it ends: the lag is normal at the
    window's end and climbs right after. The drain ends on the way down from that climb, and a
    climb still above normal at the end of the window is "still draining", not 0 s."""
    t = np.linspace(0.0, 480.0, 241)
    lag = np.full(t.size, 20.0)
    lag[(t > 421.0) & (t < 470.0)] = 900.0
    d = drain(t, lag, [(120.0, 420.0)], 40.0, 25.0, ["broker_loss"])
    assert d.drain_seconds is not None and 48.0 <= d.drain_seconds <= 52.0, d
    lag[t > 421.0] = 900.0
    d = drain(t, lag, [(120.0, 420.0)], 40.0, 25.0, ["broker_loss"])
    assert d.drain_seconds is None
    assert d.note is not None and d.note.startswith("still draining at the end of the window")


def test_a_climb_long_after_the_fault_or_a_momentary_queue_is_not_the_faults() -> None:
    """A busy design's lag wanders above its band now and then: a stretch that starts well after
    the window, or lasts a few seconds, is normal running, not work the fault released."""
    t = np.linspace(0.0, 600.0, 301)
    lag = np.full(t.size, 20.0)
    lag[(t > 300.0) & (t < 340.0)] = 500.0  # 40 s, starting 40 s after the window
    lag[(t > 262.0) & (t < 266.0)] = 500.0  # 4 s right after it
    d = drain(t, lag, [(200.0, 260.0)], 40.0, 25.0, ["worker_crash"])
    assert d.drain_seconds == 0.0


def test_a_lag_normal_after_the_fault_drains_in_0_s() -> None:
    t = np.linspace(0.0, 600.0, 181)
    lag = np.full(t.size, 20.0)
    d = drain(t, lag, [(200.0, 260.0)], 40.0, 25.0, ["worker_crash"])
    assert d.drain_seconds == 0.0
