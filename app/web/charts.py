"""The charts of a simulation: data for static/js/charts.js and a text summary of each.

Each chart is a small JSON document (``spec``) that charts.js turns into a Chart.js chart; the
``summary`` says in one or two sentences what the chart shows, for screen readers and for a
browser without JavaScript. Time is in seconds from the start of the scenario, lag in step
events, rates in step events per second, money in US dollars per month.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.web.backlog import STEADY, shown_drain
from app.web.formatting import component_name, count, duration, eps, percent, usd
from simulator.result import Cost, FaultWindow, SimulationResult

FAULT_NAMES = {
    "worker_crash": "worker crash",
    "rebalance": "rebalance",
    "state_failover": "state-store failover",
    "provider_outage": "provider outage",
    "broker_loss": "broker loss",
    "follower_lag": "followers behind",
    "poison": "poison message",
    "consumer_pause": "consumer pause",
    "rolling_restart": "rolling deploy",
    "member_pause": "member pause",
}


@dataclass(frozen=True)
class Chart:
    """One chart: its element id, title, the spec charts.js draws and the text summary."""

    id: str
    title: str
    spec: dict[str, Any]
    summary: str


def fault_name(kind: str) -> str:
    """A fault kind in words: "worker_crash" -> "worker crash"."""
    return FAULT_NAMES.get(kind, kind.replace("_", " "))


def drain_time_s(result: SimulationResult) -> float | None:
    """Seconds from the start of the run at which lag was back to normal after the last fault,
    or None without faults or when it never drained."""
    drain = result.metrics.drain_seconds
    if not result.fault_windows or drain is None:
        return None
    return max(w.end_s for w in result.fault_windows) + drain


def _windows(windows: list[FaultWindow]) -> list[dict[str, Any]]:
    return [{"label": fault_name(w.kind), "start": w.start_s, "end": w.end_s} for w in windows]


def _windows_text(windows: list[FaultWindow]) -> str:
    """The fault windows in words, one phrase per fault kind in order of first appearance: a
    kind met once reads "from .. to ..", a kind met n times "n times, between .. and .."."""
    by_kind: dict[str, list[FaultWindow]] = {}
    for w in windows:
        by_kind.setdefault(w.kind, []).append(w)
    phrases = []
    for kind, found in by_kind.items():
        start = min(w.start_s for w in found)
        end = max(w.end_s for w in found)
        if len(found) == 1:
            phrases.append(f"{fault_name(kind)} from {duration(start)} to {duration(end)} (shaded)")
        else:
            phrases.append(
                f"{fault_name(kind)} {len(found)} times, between {duration(start)} and "
                f"{duration(end)} (shaded)"
            )
    return "; ".join(phrases)


def _peak(times: list[float], values: list[int] | list[float]) -> tuple[float, float]:
    if not values:
        return 0.0, 0.0
    index = max(range(len(values)), key=lambda i: values[i])
    return float(values[index]), times[index]


def lag_chart(result: SimulationResult) -> Chart:
    """Total lag and the worst partition's lag over time, fault windows shaded, drain marked."""
    ts = result.timeseries
    peak, at = _peak(ts.t_s, ts.lag_total)
    worst, _ = _peak(ts.t_s, ts.lag_worst_partition)
    drained = drain_time_s(result)
    markers = [{"label": "drained", "x": drained}] if drained is not None else []
    parts = [
        f"Total lag peaked at {count(peak)} step events at {duration(at)}; "
        f"the worst partition at {count(worst)}."
    ]
    if result.fault_windows:
        parts.append(_windows_text(result.fault_windows).capitalize() + ".")
        if drained is not None:
            parts.append(
                f"Lag was back to normal {duration(result.metrics.drain_seconds)} after the "
                f"fault ended, at {duration(drained)} (marked)."
            )
        else:
            _, shown = shown_drain(result)
            note = shown or "capacity stayed below arrivals"
            if note.startswith(STEADY):
                held = note.removeprefix(STEADY).removeprefix(": ")
                parts.append(f"Lag was not back to normal by the end of the run: {held}.")
            else:
                parts.append(f"Lag had not drained by the end of the run ({note}).")
    spec = {
        "type": "line",
        "x": {"label": "time (s)"},
        "y": {"label": "lag (step events)"},
        "t": ts.t_s,
        "series": [
            {"label": "total lag", "data": ts.lag_total},
            {"label": "worst partition", "data": ts.lag_worst_partition},
        ],
        "windows": _windows(result.fault_windows),
        "markers": markers,
    }
    return Chart("chart-lag", "Consumer lag over time", spec, " ".join(parts))


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _busiest(result: SimulationResult) -> str:
    """The busiest consumer group's capacity against what reaches it: the totals above add up
    every group, a capacity belongs to one."""
    groups = result.metrics.by_group
    if not groups:
        return f"capacity of the bottleneck group {eps(result.metrics.capacity_eps)}"
    name, g = max(groups.items(), key=lambda item: item[1].utilisation)
    if g.capacity_eps <= 0:
        return f"the busiest group, {name}, has no capacity: it processes nothing"
    # Utilisation is the offered (due) load over the capacity: above 100 % when the group falls
    # behind, which the measured throughput beside it never shows, so it is said as the load's.
    offered = percent(g.utilisation)
    can_take = eps(g.capacity_eps)
    return f"the busiest group, {name}, can take {can_take} (the load offered is {offered} of it)"


def throughput_chart(result: SimulationResult) -> Chart:
    """Arrivals and throughput per second over time, fault windows shaded."""
    ts = result.timeseries
    low, low_at = min(
        ((v, t) for v, t in zip(ts.throughput_eps, ts.t_s, strict=False)), default=(0.0, 0.0)
    )
    summary = (
        f"Arrivals averaged {eps(_mean(ts.arrivals_eps))} and throughput "
        f"{eps(_mean(ts.throughput_eps))} (all consumer groups together), lowest {eps(low)} at "
        f"{duration(low_at)}; {_busiest(result)}."
    )
    spec = {
        "type": "line",
        "x": {"label": "time (s)"},
        "y": {"label": "step events per second"},
        "t": ts.t_s,
        "series": [
            {"label": "arrivals", "data": ts.arrivals_eps},
            {"label": "throughput", "data": ts.throughput_eps},
        ],
        "windows": _windows(result.fault_windows),
        "markers": [],
    }
    return Chart("chart-throughput", "Throughput against arrivals", spec, summary)


def cost_chart(cost: Cost) -> Chart:
    """Monthly cost by component as horizontal bars (components costing nothing left out),
    the budget marked; the summary compares the total with the budget."""
    items = sorted(((c, v) for c, v in cost.by_component.items() if v > 0), key=lambda cv: -cv[1])
    largest = ", ".join(f"{component_name(c)} {usd(v)}" for c, v in items[:3])
    verdict = "over" if cost.over_budget else "within"
    summary = (
        f"Monthly cost {usd(cost.monthly_usd)} against a budget of {usd(cost.budget_usd)} "
        f"({percent(cost.budget_share)}, {verdict} budget). Largest: {largest or 'none'}."
    )
    spec = {
        "type": "bar",
        "x": {"label": "US dollars per month"},
        "labels": [component_name(c) for c, _ in items],
        "series": [{"label": "monthly cost", "data": [v for _, v in items]}],
        "windows": [],
        "markers": [{"label": f"budget {usd(cost.budget_usd)}", "x": cost.budget_usd}],
    }
    return Chart("chart-cost", "Monthly cost by component", spec, summary)


def simulation_charts(result: SimulationResult, cost: Cost | None) -> list[Chart]:
    """The charts of a simulation: lag, throughput and, when priced, cost by component."""
    charts = [lag_chart(result), throughput_chart(result)]
    if cost is not None:
        charts.append(cost_chart(cost))
    return charts
