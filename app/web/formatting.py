"""Numbers as the learner reads them: rates, percentages, dollars, durations (Jinja filters)."""

from __future__ import annotations

import math

from jinja2 import Environment

from app.web.backlog import STEADY
from simulator.engine.metrics import STILL_ON

INFINITE = "∞"
"""How a non-finite figure reads (utilisation of a group with no capacity, say): never a crash."""


def count(value: float | None) -> str:
    """A count with thousands separators: 1234 -> "1,234"; None -> "–"."""
    if value is None:
        return "–"
    if not math.isfinite(value):
        return INFINITE
    return f"{round(value):,}"


def eps(value: float | None) -> str:
    """A rate in step events per second with one decimal: 16 -> "16.0/s"."""
    if value is None:
        return "–"
    return f"{value:,.1f}/s"


def percent(value: float | None) -> str:
    """A fraction as a whole percentage: 0.625 -> "62 %" (rounded half to even)."""
    if value is None:
        return "–"
    if not math.isfinite(value):
        return f"{INFINITE} %"
    return f"{round(value * 100):,} %"


def usd(value: float | None) -> str:
    """Dollars without cents: 72938.43 -> "$72,938"."""
    if value is None:
        return "–"
    return f"${value:,.0f}"


def usd_short(value: float | None) -> str:
    """Dollars in thousands above $10k: 72938.43 -> "$72.9k", 85000 -> "$85k", 907.2 -> "$907"."""
    if value is None:
        return "–"
    if abs(value) >= 10_000:
        return f"${value / 1000:,.1f}".removesuffix(".0") + "k"
    return f"${value:,.0f}"


def duration(seconds: float | None) -> str:
    """Seconds as the learner says them: 45 -> "45 s", 300 -> "5 min", 370 -> "6 min 10 s",
    7200 -> "2 h"; None -> "never"."""
    if seconds is None or not math.isfinite(seconds):
        return "never"
    total = round(seconds)
    if total < 60:
        return f"{total} s"
    if total < 3600:
        minutes, rest = divmod(total, 60)
        return f"{minutes} min" + (f" {rest} s" if rest else "")
    hours, rest = divmod(total, 3600)
    return f"{hours} h" + (f" {rest // 60} min" if rest // 60 else "")


def never_drains(seconds: float | None, note: str | None) -> bool:
    """True when the simulator says the backlog never drains (capacity at or below arrivals),
    as opposed to a run that ended while it was still draining."""
    return seconds is None and (note or "").startswith("never")


def fault_still_on(note: str | None) -> str | None:
    """What was still down when the window ended ("workers still down"), from the simulator's
    drain note, or None when no fault outlasted the window."""
    for still in STILL_ON.values():
        if (note or "").startswith(still):
            return still
    if note and " still on at the end" in note:
        return note.split(" at the end")[0]
    return None


def drain(seconds: float | None, note: str | None = None) -> str:
    """Time to drain in words: "5 min 23 s", "never" (capacity below arrivals), "workers still
    down at the end" (a fault outlasted the window: nothing could drain yet), "not back to
    normal" (the lag was not falling at the end, above its normal band:
    app.web.backlog.shown_drain; the note gives where it stood and its level before the fault),
    or "still draining at the end" (the scenario ended while the lag was still falling; the note
    says how far it had to go)."""
    if seconds is not None:
        return duration(seconds)
    if never_drains(seconds, note):
        return "never"
    if (note or "").startswith(STEADY):
        return STEADY
    still = fault_still_on(note)
    return f"{still} at the end" if still else "still draining at the end"


def utilisation(value: float | None, capacity_eps: float | None) -> str:
    """Utilisation as a percentage, or "no capacity" when the group can process nothing (zero
    instances or slots: a percentage of nothing means nothing)."""
    if capacity_eps is not None and capacity_eps <= 0:
        return "no capacity"
    return percent(value)


def component_name(component: str) -> str:
    """A cost component as words: "workers_agent" -> "workers agent", "repeats_deploys" ->
    "paid again after deploys"."""
    words = component.replace("_", " ")
    if words.startswith("repeats "):
        return "paid again after " + words.removeprefix("repeats ")
    return words


def level(utilisation: float | None) -> str:
    """A utilisation band for colour and words: "ok" below 70 %, "high" below 90 %, else
    "saturated" (queues grow without bound at 100 %)."""
    if utilisation is None:
        return "unknown"
    if utilisation < 0.7:
        return "ok"
    if utilisation < 0.9:
        return "high"
    return "saturated"


def register(env: Environment) -> None:
    """Add these functions to ``env`` as filters of the same names."""
    env.filters.update(
        count=count,
        eps=eps,
        percent=percent,
        usd=usd,
        usd_short=usd_short,
        duration=duration,
        drain=drain,
        never_drains=never_drains,
        component_name=component_name,
        level=level,
        utilisation=utilisation,
    )
