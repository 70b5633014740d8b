"""From a finished simulation to figures: capacity, utilisation, backlog, drain time, percentiles.

Definitions (all counts in step events, times in seconds, rates in step events per second):

- **capacity_eps** of a group = parallel steps / measured mean step time, bounded by the group's
  rate limits: parallel steps = ``min(partitions, instances x concurrency_per_instance)``, further
  bounded by the model provider's ``max_concurrency`` (agent) or the runner slots (tool); rate
  limits are ``rpm / 60`` and ``tpm / 60 / tokens per call`` (agent) and
  ``write_capacity_per_second`` (state). This is seed 000's "capacity is partitions divided by step
  time" with the step time the simulation measured. The top-level figure is the bottleneck group's
  (the one with the highest utilisation).
- **utilisation** = offered load / capacity (offered: the scenario's nominal rate for the group),
  capped at :data:`UTILISATION_CAP` when the capacity is zero.
- **Normal lag** (baseline): the mean total lag over the quarter-to-end of the time before the first
  fault (at least :data:`MIN_BASELINE_SAMPLES` samples); otherwise, or without faults, the mean over
  the window. **backlog_peak** = largest total lag - normal lag (after a worker crash: the
  backlog at the restart, ``backlog_at_restart`` of :mod:`simulator.faults.crash`, plus what
  arrives while the returning workers rejoin and start; see docs/simulator-model.md).
- **Incidents**: the fault windows the normal lag and the drain are read around
  (:func:`incidents`). A poison stall the design ends (it gives the event up after its retries)
  is part of a poison scenario's steady state, as the load is, not an incident: a poison rate
  runs to the end of the window, so a stall is on at the end at some seeds and not at others.
  A stall the design never ends (retries without a limit) is an incident still on at the end.
- **drain_seconds**: from the end of the last incident to the first time the total lag is back
  under ``normal + max(1, 3 x its standard deviation, 0.5 % of the backlog peak)`` (linear
  interpolation between samples). ``None`` when that never happens in the window; ``drain_note``
  then says why (a fault still on at the end: "workers still down at the end of the window",
  nothing could drain yet; otherwise how far it still had to go). ``None`` as well, whatever the
  lag does, when the bottleneck's capacity is at or below its arrivals: "never drains" (the lag
  climbs from the start, so there is no normal level to come back to).
- **Latency** of an event: first completion - arrival; **wait**: first start - arrival. Percentiles
  use numpy's linear interpolation over every processed event *and every event still waiting at
  the end* (arrived, neither finished nor given up), counted with its wait so far, end - arrival:
  a lower bound of its latency (right-censored). Without them a backlog left at the end would
  not show in the percentiles at all (the events that waited longest are the ones not finished).
  ``latency_censored`` counts them; when it is above 0 the percentiles are lower bounds. Means
  (``latency_mean_s``, ``wait_mean_s``) are over the finished events only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

UTILISATION_CAP = 1000.0
"""Utilisation reported when a group with offered load has no capacity at all."""

REFINE_POINTS = 64
"""Grid points on which :func:`drain` looks for the crossing between two samples."""

SURGE_MIN_S = 10.0
"""A stretch above normal that starts within this many seconds of the faults' end and lasts at
least as long is work they released (five mean model calls): see :func:`_last_surge_s`."""

MIN_BASELINE_SAMPLES = 5
"""Fewest lag samples before the first fault to measure the normal lag from."""


def sig(x: float, digits: int = 6) -> float:
    """``x`` rounded to ``digits`` significant digits (stable, readable JSON)."""
    if x == 0 or not math.isfinite(x):
        return float(x)
    return float(f"{x:.{digits}g}")


def percentiles(values: np.ndarray, qs: Sequence[float]) -> list[float]:
    """Percentiles ``qs`` (0..100) of ``values`` (shape ``(n,)``), 0.0 each when empty."""
    if values.size == 0:
        return [0.0 for _ in qs]
    return [float(v) for v in np.percentile(values, list(qs))]


def censored_latencies(
    arrivals_s: np.ndarray, finishes_s: np.ndarray, settled: np.ndarray, end_s: float
) -> np.ndarray:
    """Wait so far, ``end_s - arrival``, of every event still waiting at ``end_s``: arrived by
    then, not finished by then (its first finish NaN or later) and not given up (``settled``
    with no finish: lost, dead-lettered or skipped). Inputs shape ``(n,)`` in one order; the
    result shape ``(k,)``, seconds, each a lower bound of that event's latency."""
    unfinished = ~(finishes_s <= end_s)
    gone = settled & np.isnan(finishes_s)
    waiting = (arrivals_s <= end_s) & unfinished & ~gone
    return end_s - arrivals_s[waiting]


@dataclass(frozen=True)
class Drain:
    """Backlog and recovery figures read from the total-lag samples."""

    baseline: float
    backlog_peak: int
    drain_seconds: float | None
    note: str | None


def _fmt_rate(x: float) -> str:
    return f"{x:.1f}"


STILL_ON = {
    "worker_crash": "workers still down",
    "provider_outage": "provider still down",
    "state_failover": "state store still failing over",
    "broker_loss": "broker still down",
    "follower_lag": "followers still behind",
    "poison": "a poison event still stalling its partition",
}
"""How the note names a fault that outlasts the window, by its kind (else: "<kind> still on")."""


@dataclass(frozen=True)
class Incidents:
    """The fault windows the drain is read around: ``windows`` (``(start, end)`` seconds) and
    their ``kinds``, and ``steady``: a sentence on the poison stalls left out as part of the
    steady state (None when there were none)."""

    windows: list[tuple[float, float]]
    kinds: list[str]
    steady: str | None


def incidents(
    windows: Sequence[tuple[float, float, str]], end_s: float, poison_stalls_forever: bool
) -> Incidents:
    """The incidents among a run's fault ``windows`` (``(start, end, kind)``, seconds): every
    window but the poison stalls, and those still on at ``end_s`` when the design retries a
    poison event without a limit (``poison_stalls_forever``: the stall never ends). Rules in the
    module docstring."""
    kept = [w for w in windows if w[2] != "poison" or (poison_stalls_forever and w[1] >= end_s)]
    stalls = [w for w in windows if w[2] == "poison" and w not in kept]
    steady = None
    if stalls:
        ended = [w[1] - w[0] for w in stalls if w[1] < end_s]
        on = len(stalls) - len(ended)
        longest = f"the longest {max(ended):,.0f} s" if ended else "none ended yet"
        still = f"; {on} still on at the end" if on else ""
        steady = (
            f"{len(stalls)} poison {'stall' if len(stalls) == 1 else 'stalls'}, each until the "
            "design gives its event up "
            f"({longest}{still}), are part of the steady state"
        )
    return Incidents([(w[0], w[1]) for w in kept], [w[2] for w in kept], steady)


def normal_level(t_s: np.ndarray, values: np.ndarray, first: float | None) -> tuple[float, float]:
    """The normal level of a sampled series and its spread (mean and standard deviation, in the
    series' unit): over the quarter-to-end of the time before the first fault at ``first``
    seconds (at least :data:`MIN_BASELINE_SAMPLES` samples), else every sample before it, else
    (no fault) the whole window. ``t_s`` and ``values`` shape ``(k,)``; (0, 0) with no sample."""
    base_mask = np.zeros(values.size, dtype=bool)
    if first is not None:
        base_mask = (t_s >= first * 0.25) & (t_s < first)
    if base_mask.sum() < MIN_BASELINE_SAMPLES:
        base_mask = np.ones(values.size, dtype=bool) if first is None else t_s < first
    if base_mask.sum() < 1:
        return 0.0, 0.0
    base_vals = values[base_mask]
    return float(base_vals.mean()), float(base_vals.std())


def above_normal_peak(
    t_s: np.ndarray, values: np.ndarray, windows: Sequence[tuple[float, float]]
) -> int:
    """The largest value of a sampled series above its normal band (:func:`normal_level` before
    the first of ``windows``: the mean plus 3 standard deviations, the band :func:`drain` calls
    back to normal), rounded, at least 0; 0 for an empty series."""
    if values.size == 0:
        return 0
    first = min((w[0] for w in windows), default=None)
    baseline, spread = normal_level(t_s, values, first)
    return int(round(max(0.0, float(values.max()) - baseline - 3.0 * spread)))


def drain(
    t_s: np.ndarray,
    lag: np.ndarray,
    windows: Sequence[tuple[float, float]],
    capacity_eps: float,
    offered_eps: float,
    kinds: Sequence[str] = (),
    backlog_at: Callable[[np.ndarray], np.ndarray] | None = None,
    steady: str | None = None,
) -> Drain:
    """Backlog peak and drain time from total lag ``lag`` sampled at ``t_s`` (both shape ``(k,)``).

    ``windows``: ``(start, end)`` of every fault in seconds, ``kinds`` their kinds (same order,
    for the note); ``capacity_eps`` and ``offered_eps`` of the bottleneck group: at or below
    its arrivals the backlog never drains (None and "never drains: ..."), whatever the lag did
    around the faults. A fault still on at the last sample leaves ``drain_seconds`` None with a
    note that says so (nothing could drain yet), not an estimate of the time left.
    ``backlog_at``: the backlog at any times (shape ``(m,)`` in, ``(m,)`` out), to find the
    crossing between two samples on a grid of :data:`REFINE_POINTS` (else it is interpolated
    linearly): a long window's samples are far apart (every 78 s in 52 hours). ``steady``: what
    recurs without being an incident (:func:`incidents`), said in the note when there is no
    incident.
    """
    if lag.size == 0:
        return Drain(0.0, 0, 0.0, None)
    peak = float(lag.max())
    first = min((w[0] for w in windows), default=None)
    baseline, spread = normal_level(t_s, lag, first)
    backlog = max(0.0, peak - baseline)
    equal = abs(capacity_eps - offered_eps) <= 0.005 * max(offered_eps, 1e-12)
    sign = "=" if equal else "<"
    never = (
        f"never drains: capacity {_fmt_rate(capacity_eps)}/s {sign} arrivals "
        f"{_fmt_rate(offered_eps)}/s"
    )
    overloaded = offered_eps > 0 and (equal or capacity_eps < offered_eps)
    if overloaded:
        # Capacity at or below arrivals: the backlog grows from the start, fault or not, so the
        # lag before the first fault is no normal level (it climbs, and its spread makes the
        # band wide enough for a still-climbing lag to fall inside it after the fault).
        return Drain(baseline, int(round(backlog)), None, never)
    if first is None:
        what = "no fault in this scenario" if steady is None else f"no incident: {steady}"
        return Drain(
            baseline, int(round(backlog)), 0.0, f"{what}; lag stays near {baseline:.0f} events"
        )
    end = max(w[1] for w in windows)
    threshold = baseline + max(1.0, 3.0 * spread, 0.005 * backlog)
    from_s = _last_surge_s(t_s, lag, end, threshold)
    after = np.nonzero((t_s >= from_s) & (lag <= threshold))[0]
    if after.size == 0:
        if end >= float(t_s[-1]):
            last = max(range(len(windows)), key=lambda i: windows[i][1])
            kind = kinds[last] if last < len(kinds) else "the fault"
            still = STILL_ON.get(kind, f"{kind.replace('_', ' ')} still on")
            behind = max(0.0, float(lag[-1]) - baseline)
            why = (
                "the lag cannot settle while it does" if kind == "poison" else "none can drain yet"
            )
            note = (
                f"{still} at the end of the window (until {end:,.0f} s): "
                f"{behind:,.0f} events above normal, {why}"
            )
            return Drain(baseline, int(round(backlog)), None, note)
        left = float(lag[-1]) - baseline
        headroom = capacity_eps - offered_eps
        eta = left / headroom if headroom > 0 else math.inf
        note = (
            f"still draining at the end of the window: {left:,.0f} events above normal; at "
            f"{_fmt_rate(headroom)}/s of headroom about {eta:.0f} s more"
        )
        return Drain(baseline, int(round(backlog)), None, note)
    k = int(after[0])
    t_cross = float(t_s[k])
    if backlog_at is not None and k > 0:
        lo = max(from_s, float(t_s[k - 1]))
        grid = np.linspace(lo, t_cross, REFINE_POINTS)
        below = np.nonzero(backlog_at(grid) <= threshold)[0]
        if below.size:
            t_cross = float(grid[below[0]])
    elif k > 0 and lag[k - 1] > threshold and t_s[k - 1] >= from_s:
        prev, cur = float(lag[k - 1]), float(lag[k])
        frac = (prev - threshold) / (prev - cur) if prev != cur else 1.0
        t_cross = float(t_s[k - 1]) + frac * float(t_s[k] - t_s[k - 1])
    return Drain(baseline, int(round(backlog)), max(0.0, t_cross - end), None)


def _last_surge_s(t_s: np.ndarray, lag: np.ndarray, end: float, threshold: float) -> float:
    """Where the drain is measured from: ``end``, or the start of a surge right after it.

    A fault may hold work back and release it when it ends: producers a broker loss blocked
    send what they held, and the runs it stalled resume, so the backlog is normal at the
    window's end and climbs right after. A surge is a stretch above ``threshold`` that starts
    within :data:`SURGE_MIN_S` of ``end`` and lasts at least as long; a later stretch is not the
    fault's (a busy design's lag wanders above its band now and then), and a shorter one is a
    momentary queue of normal running (a few steps' worth: up to about 3 s at the course's
    loads). ``t_s``, ``lag``: shape ``(k,)``, the samples."""
    above = (t_s >= end) & (lag > threshold)
    if not above.any():
        return end
    edges = np.diff(above.astype(np.int8), prepend=np.int8(0), append=np.int8(0))
    starts = np.nonzero(edges == 1)[0]
    stops = np.nonzero(edges == -1)[0]  # one past each stretch's last sample
    last_t = float(t_s[-1])
    from_s = end
    for i, j in zip(starts.tolist(), stops.tolist(), strict=True):
        start = float(t_s[i])
        if start > end + SURGE_MIN_S:
            break
        until = float(t_s[j]) if j < t_s.size else last_t
        if until - start >= SURGE_MIN_S:
            from_s = start
    return from_s


def bin_counts(times: np.ndarray, bin_s: float, bins: int) -> np.ndarray:
    """Counts of ``times`` (seconds) in ``bins`` bins ``[k bin_s, (k+1) bin_s)``; NaNs ignored."""
    if times.size == 0:
        return np.zeros(bins, dtype=np.int64)
    finite = times[np.isfinite(times)]
    idx = np.floor(finite / bin_s).astype(np.int64)
    idx = idx[(idx >= 0) & (idx < bins)]
    return np.bincount(idx, minlength=bins)[:bins]
