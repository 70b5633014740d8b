"""The learner's architecture as a diagram: laid out here, drawn as SVG by _diagram.html.

From left to right: the run API, the event log with one cell per partition, the three consumer
groups with one cell per instance, and what each group calls (model providers, the tool fleet,
the state store with its replicas). Each consumer group, the provider and the store carry a
utilisation bar with its percentage: measured by the last simulation when there is one, else the
closed-form estimate, and the caption says which. Coordinates are SVG user units; the viewBox is
``0 0 WIDTH height``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

from app.web.formatting import level, percent
from simulator.capacity import LimitingFactor, capacity_limits
from simulator.design import ConsumerGroup, Design
from simulator.estimate import Estimate
from simulator.groups import GROUPS, GroupName
from simulator.result import Metrics, Timeseries

WIDTH = 800
CELL = 12
CELL_GAP = 4
MAX_PARTITION_CELLS = 60
MAX_INSTANCE_CELLS = 10
GROUP_HEIGHT = 120
GAP = 12
LINE = 15
SIDE_WIDTH = 200.0
API_X, API_WIDTH = 8.0, 116.0
LOG_X = 148.0
GROUP_X = 372.0
SIDE_X = 592.0

Source = Literal["simulation", "estimate", "none"]


@dataclass(frozen=True)
class Cell:
    """A small square: a partition, an instance, a runner or a store node."""

    x: float
    y: float
    kind: str
    label: str
    hot: bool = False


@dataclass(frozen=True)
class Meter:
    """A utilisation bar: ``value`` as a fraction (bar capped at 100 %), colour band and text."""

    x: float
    y: float
    width: float
    value: float | None
    label: str

    @property
    def fill_width(self) -> float:
        """Width of the filled part."""
        return self.width * min(max(self.value or 0.0, 0.0), 1.0)

    @property
    def level(self) -> str:
        """ok, high, saturated or unknown (see app.web.formatting.level)."""
        return level(self.value)


@dataclass(frozen=True)
class Box:
    """A component: its frame, a title and the text lines under it."""

    id: str
    x: float
    y: float
    width: float
    height: float
    title: str
    lines: tuple[str, ...] = ()
    cells: tuple[Cell, ...] = ()
    meter: Meter | None = None
    more: str = ""
    """A note after the cells when not all are drawn ("+ 40 more")."""


@dataclass(frozen=True)
class Arrow:
    """A connector from (x1, y1) to (x2, y2), arrowhead at the end."""

    x1: float
    y1: float
    x2: float
    y2: float


@dataclass(frozen=True)
class Diagram:
    """Everything _diagram.html draws, plus the text alternative."""

    height: float
    boxes: tuple[Box, ...]
    arrows: tuple[Arrow, ...]
    source: Source
    scenario: str
    description: str
    width: float = WIDTH
    legend: tuple[str, ...] = field(default=("ok", "high", "saturated"))


def _cells(
    x: float, y: float, count: int, per_row: int, kind: str, labels: list[str], hot: set[int]
) -> tuple[Cell, ...]:
    return tuple(
        Cell(
            x + (i % per_row) * (CELL + CELL_GAP),
            y + (i // per_row) * (CELL + CELL_GAP),
            kind,
            labels[i],
            i in hot,
        )
        for i in range(count)
    )


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def _cells_top(y: float, lines: tuple[str, ...]) -> float:
    """Where a box's cells start: below its title and text lines."""
    return y + 22 + LINE * len(lines) + 4


def _hot_partitions(timeseries: Timeseries | None) -> set[int]:
    """Partitions whose largest lag is more than twice the median partition's (and above 10)."""
    lags = timeseries.partition_lag_max if timeseries else []
    if not lags:
        return set()
    median = sorted(lags)[len(lags) // 2]
    return {i for i, lag in enumerate(lags) if lag > max(2 * median, 10)}


def _utilisations(
    metrics: Metrics | None, estimate: Estimate | None
) -> tuple[dict[str, float], Source]:
    """Utilisation per group, from the simulation else the estimate; ``math.inf`` for a group
    with no capacity (the simulation caps that at 1000: a percentage of nothing means nothing)."""
    if metrics is not None and metrics.by_group:
        found = {g: (m.utilisation, m.capacity_eps) for g, m in metrics.by_group.items()}
        source: Source = "simulation"
    elif estimate is not None:
        found = {g: (e.utilisation, e.capacity_eps) for g, e in estimate.by_group.items()}
        source = "estimate"
    else:
        return {}, "none"
    return {g: (u if capacity > 0 else math.inf) for g, (u, capacity) in found.items()}, source


def _limit_use(
    design: Design,
    metrics: Metrics | None,
    estimate: Estimate | None,
    group: str,
    limit: LimitingFactor,
) -> float | None:
    """How much of one capacity ceiling of ``group`` the load uses (a fraction; ``math.inf`` for
    a ceiling of nothing, which the simulation reports as its cap, UTILISATION_CAP): the
    simulation's figure when there is one, else the estimate's arrivals over that ceiling; None
    when neither knows it."""
    if metrics is not None and metrics.by_group:
        found = metrics.by_group.get(group)
        use = None if found is None else found.limits_utilisation.get(limit.value)
        if use is not None and _no_ceiling(design, group, limit):
            return math.inf
        return use
    if estimate is None or group not in estimate.by_group:
        return None
    figures = estimate.by_group[group]
    ceiling = figures.limits_eps.get(limit.value)
    if ceiling is None:
        return None
    return figures.arrivals_eps / ceiling if ceiling > 0 else math.inf


def _no_ceiling(design: Design, group: str, limit: LimitingFactor) -> bool:
    """True when the design sets ``limit`` of ``group`` at nothing (0 runners, 0 instances, an
    RPM of 0): any step time, any tokens per call."""
    return capacity_limits(design, group, 1.0, 1).get(limit.value, 1.0) <= 0


def _event_log(design: Design, x: float, height: float, timeseries: Timeseries | None) -> Box:
    log = design.event_log
    width = 200.0
    per_row = int((width - 16) // (CELL + CELL_GAP))
    shown = min(log.partitions, MAX_PARTITION_CELLS)
    lags = timeseries.partition_lag_max if timeseries else []
    labels = [
        f"partition {i}" + (f": largest lag {lags[i]:,} events" if i < len(lags) else "")
        for i in range(shown)
    ]
    hot = _hot_partitions(timeseries)
    lines: tuple[str, ...] = (
        f"{log.partitions} partitions · key {log.partition_key}",
        f"{log.brokers} brokers · RF {log.replication_factor} · ISR {log.min_insync_replicas}",
        f"acks {log.acks} · retention {log.retention_hours:g} h",
    )
    if hot:
        # Descriptive, not a verdict: bursts of one run's calls lag some partitions on any key.
        lines += (f"{len(hot)} with lag > 2× median (marked)",)
    top = 8 + 22 + LINE * len(lines) + 8
    more = f"+ {log.partitions - shown} more" if log.partitions > shown else ""
    cells = _cells(x + 8, top, shown, per_row, "partition", labels, hot)
    return Box("event-log", x, 8, width, height, "Event log", lines, cells, None, more)


def _group(
    name: GroupName, group: ConsumerGroup, x: float, y: float, utilisation: float | None
) -> Box:
    width = 196.0
    slots = group.instances * group.concurrency_per_instance
    lines = (
        f"{_plural(group.instances, 'instance')} × {group.concurrency_per_instance}"
        f" = {_plural(slots, 'slot')}",
        f"poll {group.max_poll_records} · {group.assignment}",
    )
    shown = min(group.instances, MAX_INSTANCE_CELLS)
    cells_top = _cells_top(y, lines)
    labels = [f"{name} instance {i + 1}" for i in range(shown)]
    cells = _cells(x + 8, cells_top, shown, MAX_INSTANCE_CELLS, "instance", labels, set())
    more = f"+ {group.instances - shown} more" if group.instances > shown else ""
    meter = Meter(x + 8, y + GROUP_HEIGHT - 17, width - 16, utilisation, _busy(utilisation))
    title = f"{name} group"
    return Box(f"group-{name}", x, y, width, GROUP_HEIGHT, title, lines, cells, meter, more)


def _busy(utilisation: float | None) -> str:
    if utilisation is None:
        return "utilisation not known yet"
    if math.isinf(utilisation):
        return "no capacity: 0 slots"
    return f"{percent(utilisation)} busy ({level(utilisation)})"


_LIMIT_WORDS = {
    LimitingFactor.rpm: "RPM",
    LimitingFactor.tpm: "TPM",
    LimitingFactor.provider_concurrency: "concurrency",
}


def _limit_label(use: float, tightest: str, source: str) -> str:
    """The provider meter's words, short enough for its line: the share of the tightest limit
    used, by name ("43 % of TPM (last run)"), or that the limit is nothing."""
    if math.isinf(use):
        return f"no capacity: {tightest} 0 ({source})"
    return f"{percent(use)} of {tightest} ({source})"


def _providers(
    design: Design, x: float, y: float, estimate: Estimate | None, metrics: Metrics | None
) -> Box:
    model = design.model
    primary, fallback = model.primary, model.fallback
    lines = (
        f"primary: {primary.rpm:,} RPM · {primary.tpm / 1e6:g}M TPM",
        f"fallback: {fallback.rpm:,} RPM" if fallback.enabled else "fallback: none",
        f"cache {'on' if model.cache.enabled else 'off'}"
        f" · breaker {'on' if model.circuit_breaker.enabled else 'off'}",
    )
    limits = (LimitingFactor.rpm, LimitingFactor.tpm, LimitingFactor.provider_concurrency)
    simulated = {
        _LIMIT_WORDS[limit]: _limit_use(design, metrics, None, "agent", limit) for limit in limits
    }
    known = {name: u for name, u in simulated.items() if u is not None}
    load = estimate.model if estimate else None
    use: float | None = None
    label = "no load yet"
    if known:
        # The tightest limit by name: the three do not fit on the meter's line (SIDE_WIDTH).
        tightest = max(known, key=lambda name: known[name])
        top = known[tightest]
        use, label = top, _limit_label(top, tightest, "last run")
    elif load is not None:
        rpm, tpm = load.rpm_utilisation, load.tpm_utilisation
        tightest, top = ("TPM", tpm) if tpm > rpm else ("RPM", rpm)
        use, label = top, _limit_label(top, tightest, "estimate")
    meter = Meter(x + 8, y + GROUP_HEIGHT - 17, SIDE_WIDTH - 16, use, label)
    title = "Model providers"
    return Box("model-providers", x, y, SIDE_WIDTH, GROUP_HEIGHT, title, lines, (), meter)


def _tools(design: Design, x: float, y: float, utilisation: float | None) -> Box:
    tools = design.tools
    slots = tools.runners * tools.concurrency_per_runner
    lines = (
        f"{_plural(tools.runners, 'runner')} × {tools.concurrency_per_runner}"
        f" = {_plural(slots, 'slot')}",
        f"idempotency keys {'on' if tools.side_effect_idempotency_key else 'off'}",
        f"saga {'on' if tools.saga.enabled else 'off'}",
    )
    shown = min(tools.runners, MAX_INSTANCE_CELLS)
    labels = [f"tool runner {i + 1}" for i in range(shown)]
    cells = _cells(x + 8, _cells_top(y, lines), shown, MAX_INSTANCE_CELLS, "runner", labels, set())
    more = f"+ {tools.runners - shown} more" if tools.runners > shown else ""
    meter = Meter(x + 8, y + GROUP_HEIGHT - 17, SIDE_WIDTH - 16, utilisation, _busy(utilisation))
    title = "Tool fleet"
    return Box("tool-fleet", x, y, SIDE_WIDTH, GROUP_HEIGHT, title, lines, cells, meter, more)


def _store(design: Design, x: float, y: float, utilisation: float | None) -> Box:
    store = design.state_store
    replication = (
        f"async, {store.replication_lag_ms:g} ms lag"
        if store.replication == "async"
        else f"{store.replication} replication"
    )
    lines = (
        f"primary + {_plural(store.replicas, 'replica')}",
        replication,
        f"failover {store.failover}, {store.promote_seconds:g} s",
    )
    top = _cells_top(y, lines)
    shown = min(store.replicas, MAX_INSTANCE_CELLS - 1)
    labels = [f"replica {i + 1}" for i in range(shown)]
    cells = (Cell(x + 8, top, "primary", "primary"),) + _cells(
        x + 8 + CELL + CELL_GAP, top, shown, MAX_INSTANCE_CELLS, "replica", labels, set()
    )
    meter = Meter(x + 8, y + GROUP_HEIGHT - 17, SIDE_WIDTH - 16, utilisation, _busy(utilisation))
    return Box("state-store", x, y, SIDE_WIDTH, GROUP_HEIGHT, "State store", lines, cells, meter)


def _description(design: Design, utilisation: dict[str, float], source: Source) -> str:
    log = design.event_log
    groups = design.consumers
    parts = [
        f"Run API into an event log of {log.partitions} partitions on {log.brokers} brokers, "
        f"replication factor {log.replication_factor}.",
        f"Consumer groups: agent {groups.agent.instances} instances, "
        f"tool {groups.tool.instances}, state {groups.state.instances}.",
        f"State store with {design.state_store.replicas} replicas; "
        f"tool fleet of {design.tools.runners} runners; fallback provider "
        f"{'on' if design.model.fallback.enabled else 'off'}.",
    ]
    if utilisation:
        which = "last simulation" if source == "simulation" else "estimate"
        busy = ", ".join(
            f"{g} {'no capacity' if math.isinf(u) else percent(u)}" for g, u in utilisation.items()
        )
        parts.append(f"Utilisation ({which}): {busy}.")
    return " ".join(parts)


def _key_rule(design: Design) -> str:
    """What the API does with a start that has no Idempotency-Key, from the decision that sets
    it (step 1's ``missing_key_status``): 200 starts the run anyway, so no key is required."""
    return "no key required" if design.api.missing_key_status == 200 else "key required"


def architecture(
    design: Design,
    *,
    metrics: Metrics | None = None,
    timeseries: Timeseries | None = None,
    estimate: Estimate | None = None,
    scenario: str = "",
) -> Diagram:
    """Lay out ``design``; utilisation from ``metrics`` (a simulation) if given, else from
    ``estimate``; hot partitions from the simulation's ``timeseries``."""
    utilisation, source = _utilisations(metrics, estimate)
    rows = [8 + i * (GROUP_HEIGHT + GAP) for i in range(len(GROUPS))]
    height = rows[-1] + GROUP_HEIGHT + 8
    api = Box(
        "run-api",
        API_X,
        height / 2 - 46,
        API_WIDTH,
        92,
        "Run API",
        (
            f"POST /runs → {design.api.start_status_code}",
            _key_rule(design),
            f"outcome: {design.api.outcome_delivery}",
        ),
    )
    log = _event_log(design, LOG_X, height - 16, timeseries)
    agent, tool, state = (
        _group(name, design.consumers.by_name(name), GROUP_X, row, utilisation.get(name))
        for name, row in zip(GROUPS, rows, strict=True)
    )
    providers = _providers(design, SIDE_X, rows[0], estimate, metrics)
    # The fleet and the store are judged by their own ceilings, not their consumer group's.
    runners = _limit_use(design, metrics, estimate, "tool", LimitingFactor.tool_runners)
    writes = _limit_use(design, metrics, estimate, "state", LimitingFactor.state_write_capacity)
    fleet = _tools(design, SIDE_X, rows[1], runners)
    store = _store(design, SIDE_X, rows[2], writes)
    middle = GROUP_HEIGHT / 2
    arrows = [Arrow(API_X + API_WIDTH, height / 2, LOG_X, height / 2)]
    for row in rows:
        arrows.append(Arrow(log.x + log.width, row + middle, GROUP_X, row + middle))
        arrows.append(Arrow(agent.x + agent.width, row + middle, SIDE_X, row + middle))
    return Diagram(
        height,
        (api, log, agent, tool, state, providers, fleet, store),
        tuple(arrows),
        source,
        scenario,
        _description(design, utilisation, source),
    )
