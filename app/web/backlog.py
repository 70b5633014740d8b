"""Whether a backlog is still draining at the end of a run, read from the lag samples.

The simulator's drain note says "still draining at the end of the window" whenever the lag had
not come back to its pre-fault level by the end. When the lag was not falling over the run's
last samples (level, or still rising as stalled runs resume), above its normal band (261 step
events where it held 117 before two worker crashes), it is not seen draining, and the backlog is
not gone either: the pages say the lag was "not back to normal" and where it stood, beside the
level before the fault. "Still draining" is said only while the lag is still falling over
the run's last samples.
"""

from __future__ import annotations

import numpy as np

from simulator.result import SimulationResult

STILL_DRAINING = "still draining"
"""How the simulator's note begins when the lag was above normal at the end of the run."""
STEADY = "not back to normal"
"""How a shown note begins when the lag was not falling at the end, above normal (its words in
app.web.formatting.drain): it holds a backlog that is not draining, which is neither "still
draining" nor "no backlog left"."""
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
    except that "still draining at the end" becomes a note that the lag was not back to normal
    (starting with STEADY, where it stood and its level before the first fault, in step events)
    when it was not falling at the end."""
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
        f"{STEADY}: the lag was not falling at the end and stood at about {level:,.0f} step "
        f"events{was}"
    )
