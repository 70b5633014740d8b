"""Whether a backlog is still draining at the end of a run, read from the lag samples.

The simulator's drain note says "still draining at the end of the window" whenever the lag had
not come back to its pre-fault level by the end. After some faults the lag settles at a new,
steady level instead (a healthy design at 43 % utilisation holding about 135 events where it held
50 before a broker loss): nothing is left draining, and the pages must not say it is. A backlog
remains only while the lag is still falling over the run's last samples.
"""

from __future__ import annotations

import numpy as np

from simulator.result import SimulationResult

STILL_DRAINING = "still draining"
"""How the simulator's note begins when the lag was above normal at the end of the run."""
STEADY = "no backlog left"
"""How a shown note begins when the lag had stopped falling (app.web.formatting.drain)."""
MIN_TAIL_SAMPLES = 5
"""Fewest samples after the last fault to judge a trend by; with fewer the simulator's word
stands."""


def lag_still_falling(result: SimulationResult) -> bool:
    """True when total lag was still falling over the last third of the samples after the last
    fault (at least MIN_TAIL_SAMPLES of them): the least-squares line through them drops by more
    than twice the samples' scatter around it (and by more than one event) over that span.
    True as well when there are too few samples to tell."""
    ts = result.timeseries
    end_s = max((w.end_s for w in result.fault_windows), default=0.0)
    t = np.asarray(ts.t_s, dtype=float)
    lag = np.asarray(ts.lag_total, dtype=float)
    after = t >= end_s
    count = int(after.sum())
    tail = max(MIN_TAIL_SAMPLES, count // 3)
    if count < MIN_TAIL_SAMPLES:
        return True
    t_tail, lag_tail = t[after][-tail:], lag[after][-tail:]
    slope, intercept = np.polyfit(t_tail, lag_tail, 1)
    scatter = float(np.std(lag_tail - (slope * t_tail + intercept)))
    fall = -float(slope) * float(t_tail[-1] - t_tail[0])
    return fall > max(2.0 * scatter, 1.0)


def shown_drain(result: SimulationResult) -> tuple[float | None, str | None]:
    """``(drain_seconds, drain_note)`` of ``result`` as the pages show them: the simulator's,
    except that "still draining at the end" becomes a note that the lag held steady (starting
    with STEADY, its level and the level before the first fault, in step events) when it had
    stopped falling."""
    m = result.metrics
    note = m.drain_note or ""
    if m.drain_seconds is not None or not note.startswith(STILL_DRAINING):
        return m.drain_seconds, m.drain_note
    if lag_still_falling(result):
        return m.drain_seconds, m.drain_note
    ts = result.timeseries
    t = np.asarray(ts.t_s, dtype=float)
    lag = np.asarray(ts.lag_total, dtype=float)
    level = float(np.mean(lag[-MIN_TAIL_SAMPLES:]))
    first_s = min((w.start_s for w in result.fault_windows), default=0.0)
    before = lag[t < first_s]
    was = f" ({before.mean():,.0f} before the fault)" if before.size else ""
    return None, (
        f"{STEADY}: the lag had stopped falling and held at about {level:,.0f} step events at "
        f"the end{was}"
    )
