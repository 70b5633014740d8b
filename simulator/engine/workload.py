"""The offered load as arrays: step events, their arrival times, step times, runs and tenants.

A scenario drives the simulator in one of three ways (``simulator.scenario.Load``):

- **causal runs** (``runs_per_second`` with ``run_model: causal``, every runs-driven scenario of
  the course): runs are requested in ``[0, duration)`` (Poisson, or evenly spaced), each a task
  graph of the design's orchestration (``simulator.engine.taskgraph``, counts from
  :func:`simulator.fan_out.run_tasks`); the events carry no arrival time here: the producer
  (``simulator.engine.causal``) appends each one as the step before it is applied.
- **open-loop runs** (``runs_per_second``, ``run_model: open_loop``, the default): runs arrive
  (Poisson, or evenly spaced in deterministic mode) and each fans out into model calls (the agent
  consumer group), tool calls (the tool group) and state writes (the state group), shaped by the
  design's orchestration with the closed forms' rule (:func:`simulator.fan_out.fan_out_per_run`:
  peer agents without ``max_subagents`` multiply the planned step events by
  ``fan_out.uncapped_peer_multiplier``, a single agent makes 4/15 of the model calls, a
  ``token_budget_per_run`` stops the run). A fractional mean ``c`` is kept exactly over the runs:
  run ``r`` makes ``floor((r+1) c) - floor(r c)`` of that kind. A run's step events are emitted one
  after another over its *nominal span*, the sum of its steps' mean times (as if each step waited
  for the previous one and nothing queued), with the three kinds interleaved evenly. Runs start from
  ``-span`` so the arrival rate is stationary from time 0 (no ramp-up); events before 0 or after the
  window are dropped.
- **step events** (``step_events_per_second``, the single-stage mode of the worked sizing
  example): step events arrive straight into the agent group. They belong to
  ``K = max(1, round(rate x mean agent step))`` runs in flight at a time (Little's law), taken in
  turn, each run making ``fan_out.model_calls`` steps.

Open-loop loads (both modes below the first) follow seed 000's worked example: step events arrive at
their nominal times whether or not the consumers keep up (3,600 events pile up during a 180 s outage
at 20/s). For a run keyed by ``run_id`` this is pessimistic: a real run waits for its current step
before it emits the next, while here a run whose partition is stalled keeps adding its later steps
to that partition, so per-run keys drain more slowly after an outage than spread keys do.

Deterministic mode (``scenario.deterministic``) means evenly spaced arrivals and constant step
times whatever the scenario's distributions say.

Step-time distributions (seconds): constant; exponential with the given mean; lognormal with the
given mean and shape ``sigma`` (underlying normal ``mu = ln(mean) - sigma^2 / 2``, so the mean is
exact). Every random draw comes from the numpy ``Generator`` passed in; nothing uses a global RNG.

The result is a :class:`Workload`: per consumer group, flat arrays sorted by arrival time (shape
``(n,)``), plus the run id and tenant of every event so that the event log can key them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from simulator.design import Design
from simulator.engine.taskgraph import (
    GraphTemplate,
    TaskGraph,
    assemble,
    build_template,
    split_counts,
)
from simulator.fan_out import fan_out_per_run, run_tasks
from simulator.groups import GROUPS
from simulator.scenario import Scenario, StepTime
from simulator.stages import TaskCounts

MAX_EVENTS = 20_000_000
"""Upper bound on step events in one simulation (memory guard, about 1 GB of arrays)."""


@dataclass
class GroupLoad:
    """Step events offered to one consumer group, sorted by arrival time.

    ``arrival_s``: arrival time in seconds from the window start, shape ``(n,)`` float64,
    non-decreasing. ``step_s``: the step time of each event, seconds, shape ``(n,)`` float64.
    ``run``: run id of each event, shape ``(n,)`` int64. ``tenant``: tenant rank (0 = largest) of
    each event, shape ``(n,)`` int64. ``mean_step_s``: the distribution's mean step time (seconds).
    ``offered_eps``: the nominal offered load in step events per second.
    """

    name: str
    arrival_s: np.ndarray
    step_s: np.ndarray
    run: np.ndarray
    tenant: np.ndarray
    mean_step_s: float
    offered_eps: float
    task: np.ndarray | None = None

    @property
    def size(self) -> int:
        """Number of step events."""
        return int(self.arrival_s.shape[0])


@dataclass
class Workload:
    """All step events of one simulated window, per consumer group (``agent``, ``tool``, ``state``).

    ``duration_s`` is the window length in seconds; ``tokens_per_call`` the input plus output tokens
    of one model call; ``model_calls_per_run`` the mean model calls a run makes (after the
    orchestration rule); ``notes`` say which rules shaped the load.
    """

    duration_s: float
    groups: dict[str, GroupLoad]
    tokens_per_call: int
    model_calls_per_run: float
    notes: list[str] = field(default_factory=list)
    graph: TaskGraph | None = None

    @property
    def size(self) -> int:
        """Step events over all groups (every run's, for a causal workload)."""
        if self.graph is not None:
            return self.graph.events
        return sum(g.size for g in self.groups.values())

    @classmethod
    def from_arrays(
        cls,
        duration_s: float,
        agent: tuple[list[float], list[float]] | None = None,
        tool: tuple[list[float], list[float]] | None = None,
        state: tuple[list[float], list[float]] | None = None,
        tokens_per_call: int = 1800,
    ) -> Workload:
        """Build a workload from explicit ``(arrival seconds, step seconds)`` lists per group.

        For micro-cases such as worked-numbers item 4 (a batch of offsets 100..104 and a crash
        after three). Arrivals must be non-decreasing; each event is its own run and tenant 0.
        Raises ``ValueError`` when the two lists differ in length or arrivals go backwards.
        """
        groups: dict[str, GroupLoad] = {}
        for name, pair in (("agent", agent), ("tool", tool), ("state", state)):
            arrivals, steps = pair if pair is not None else ([], [])
            if len(arrivals) != len(steps):
                raise ValueError(f"{name}: {len(arrivals)} arrivals but {len(steps)} step times")
            arr = np.asarray(arrivals, dtype=np.float64)
            if arr.size and np.any(np.diff(arr) < 0):
                raise ValueError(f"{name}: arrival times must be non-decreasing")
            step = np.asarray(steps, dtype=np.float64)
            mean = float(step.mean()) if step.size else 0.0
            groups[name] = GroupLoad(
                name,
                arr,
                step,
                np.arange(arr.size, dtype=np.int64),
                np.zeros(arr.size, dtype=np.int64),
                mean,
                arr.size / duration_s if duration_s > 0 else 0.0,
            )
        return cls(duration_s, groups, tokens_per_call, 1.0, ["explicit arrivals"])


def step_times(rng: np.random.Generator, dist: StepTime, n: int, deterministic: bool) -> np.ndarray:
    """``n`` step times in seconds, shape ``(n,)``, from ``dist``; constant if deterministic."""
    mean = dist.mean_seconds
    if deterministic or dist.distribution == "constant" or n == 0:
        return np.full(n, mean, dtype=np.float64)
    if dist.distribution == "exponential":
        return rng.exponential(mean, n)
    sigma = dist.sigma
    if sigma == 0:
        return np.full(n, mean, dtype=np.float64)
    return rng.lognormal(math.log(mean) - sigma * sigma / 2.0, sigma, n)


def arrival_times(
    rng: np.random.Generator, rate: float, start: float, end: float, even: bool
) -> np.ndarray:
    """Arrival times in ``[start, end)`` at ``rate`` per second, shape ``(n,)``, sorted.

    Even: ``start + k / rate``. Poisson: the count is Poisson(rate x length) and the times are
    uniform order statistics (the same process as exponential gaps). Raises ``ValueError`` when the
    expected count exceeds :data:`MAX_EVENTS`.
    """
    length = end - start
    if rate <= 0 or length <= 0:
        return np.empty(0, dtype=np.float64)
    expected = rate * length
    if expected > MAX_EVENTS:
        raise ValueError(f"{expected:,.0f} arrivals exceed the simulator's bound of {MAX_EVENTS:,}")
    if even:
        n = int(math.ceil(expected - 1e-9))
        times = start + np.arange(n, dtype=np.float64) / rate
        return times[times < end]
    n = int(rng.poisson(expected))
    return np.sort(rng.uniform(start, end, n))


def zipf_tenants(rng: np.random.Generator, count: int, s: float, n: int) -> np.ndarray:
    """Tenant ranks ``0..count-1`` for ``n`` runs, rank ``k`` drawn with weight ``1 / (k+1)**s``."""
    if count == 1 or n == 0:
        return np.zeros(n, dtype=np.int64)
    weights = 1.0 / np.power(np.arange(1, count + 1, dtype=np.float64), s)
    cumulative = np.cumsum(weights)
    cumulative /= cumulative[-1]
    picks = np.searchsorted(cumulative, rng.random(n), side="right")
    return np.minimum(picks, count - 1).astype(np.int64)


def _per_run_counts(mean_calls: float, runs: int) -> np.ndarray:
    """Integer calls per run, shape ``(runs,)``, whose running total follows ``mean_calls``."""
    edges = np.floor(np.arange(runs + 1, dtype=np.float64) * mean_calls + 1e-9)
    return np.diff(edges).astype(np.int64)


def _single_stage(design: Design, scenario: Scenario, rng: np.random.Generator) -> Workload:
    load = scenario.load
    rate = float(load.step_events_per_second or 0.0)
    duration = scenario.duration_seconds
    even = scenario.deterministic or load.arrivals == "even"
    dist = load.step_time.agent_step
    arrivals = arrival_times(rng, rate, 0.0, duration, even)
    n = arrivals.size
    steps = step_times(rng, dist, n, scenario.deterministic)
    per_run = max(1, load.fan_out.model_calls)
    in_flight = max(1, round(rate * dist.mean_seconds))
    seq = np.arange(n, dtype=np.int64)
    run = (seq // (in_flight * per_run)) * in_flight + seq % in_flight
    runs = int(run.max()) + 1 if n else 0
    tenants = zipf_tenants(rng, load.tenants.count, load.tenants.zipf_s, runs)[run] if n else run
    empty = np.empty(0, dtype=np.float64)
    none = np.empty(0, dtype=np.int64)
    groups = {
        "agent": GroupLoad("agent", arrivals, steps, run, tenants, dist.mean_seconds, rate),
        "tool": GroupLoad(
            "tool", empty, empty, none, none, load.step_time.tool_call.mean_seconds, 0.0
        ),
        "state": GroupLoad(
            "state", empty, empty, none, none, load.step_time.state_write.mean_seconds, 0.0
        ),
    }
    tokens = load.tokens.input_per_call + load.tokens.output_per_call
    notes = [
        f"single-stage: {rate:g} step events/s straight into the agent group, "
        f"{in_flight} runs in flight of {per_run} steps each"
    ]
    return Workload(duration, groups, tokens, float(per_run), notes)


def run_template(model_calls: int, tool_calls: int, state_writes: int) -> np.ndarray:
    """The order of one run's step events: kind codes 0 model, 1 tool, 2 state, shape ``(n,)``.

    Each kind's ``j``-th event sits at fraction ``(j + 0.5) / count`` of the run; sorting by that
    fraction interleaves the kinds evenly (ties: model call, tool call, state write).
    """
    parts = []
    for kind, count in ((0, model_calls), (1, tool_calls), (2, state_writes)):
        if count > 0:
            frac = (np.arange(count, dtype=np.float64) + 0.5) / count
            parts.append(np.stack([frac, np.full(count, kind, dtype=np.float64)], axis=1))
    if not parts:
        return np.empty(0, dtype=np.int64)
    table = np.concatenate(parts)
    order = np.lexsort((table[:, 1], table[:, 0]))
    return table[order, 1].astype(np.int64)


def _causal_runs(design: Design, scenario: Scenario, rng: np.random.Generator) -> Workload:
    """Runs as causal task graphs (``simulator.engine.taskgraph``): runs requested in
    ``[0, duration)``, each a graph of the design's tasks; step events are produced as the run
    goes (``simulator.engine.causal``), so the groups' loads carry no arrival times here."""
    load = scenario.load
    rate = float(load.runs_per_second or 0.0)
    duration = scenario.duration_seconds
    even = scenario.deterministic or load.arrivals == "even"
    tasks = run_tasks(design, load)
    totals = tasks.totals
    if rate * duration * sum(totals) > MAX_EVENTS:
        raise ValueError(
            f"{rate * duration * sum(totals):,.0f} step events exceed the simulator's bound of "
            f"{MAX_EVENTS:,}"
        )
    requests = arrival_times(rng, rate, 0.0, duration, even)
    runs = requests.size
    tenants = zipf_tenants(rng, load.tenants.count, load.tenants.zipf_s, runs)
    fixed = [np.stack([_per_run_counts(c, runs) for c in role], axis=1) for role in tasks.fixed]
    researchers = _per_run_counts(tasks.researchers, runs)
    research = np.stack(
        [_per_run_counts(tasks.researchers * c, runs) for c in tasks.per_researcher], axis=1
    )
    shapes: dict[tuple[int, ...], int] = {}
    templates: list[GraphTemplate] = []
    shape_of_run = np.empty(runs, dtype=np.int64)
    for r in range(runs):
        m = int(researchers[r])
        key = (
            *(int(x) for f in fixed for x in f[r]),
            m,
            *(int(x) for x in research[r]),
            r % m if m else 0,
        )
        index = shapes.get(key)
        if index is None:
            index = shapes[key] = len(templates)
            base = key[-1]
            split = [split_counts(float(research[r][k]), m, base) for k in range(3)]
            roles = [TaskCounts(*(int(x) for x in f[r])) for f in fixed]
            team = [TaskCounts(split[0][i], split[1][i], split[2][i]) for i in range(m)]
            if tasks.sequential:
                templates.append(
                    build_template(roles[0], [], TaskCounts(0, 0, 0), TaskCounts(0, 0, 0), True)
                )
            else:
                templates.append(build_template(roles[0], team, roles[1], roles[2], False))
        shape_of_run[r] = index
    graph = assemble(templates, shape_of_run, requests, tenants)
    times = load.step_time
    dists = (times.agent_step, times.tool_call, times.state_write)
    for kind, dist in enumerate(dists):
        mask = graph.kind == kind
        graph.step_s[mask] = step_times(rng, dist, int(mask.sum()), scenario.deterministic)
    empty_f = np.empty(0, dtype=np.float64)
    empty_i = np.empty(0, dtype=np.int64)
    groups: dict[str, GroupLoad] = {
        name: GroupLoad(
            name, empty_f, empty_f, empty_i, empty_i, dists[kind].mean_seconds, rate * totals[kind]
        )
        for kind, name in enumerate(GROUPS)
    }
    notes = [
        f"{rate:g} runs/s, each {totals[0]:g} model calls, {totals[1]:g} tool calls and "
        f"{totals[2]:g} state writes ({tasks.note}); a step event is produced when the step "
        "before it in its task has been applied"
    ]
    shape = fan_out_per_run(design, load)
    return Workload(duration, groups, round(tasks.tokens_per_call), shape.model_calls, notes, graph)


def _runs(design: Design, scenario: Scenario, rng: np.random.Generator) -> Workload:
    load = scenario.load
    rate = float(load.runs_per_second or 0.0)
    duration = scenario.duration_seconds
    even = scenario.deterministic or load.arrivals == "even"
    shape = fan_out_per_run(design, load)
    mean_counts = (shape.model_calls, shape.tool_calls, shape.state_writes)
    times = load.step_time
    dists = (times.agent_step, times.tool_call, times.state_write)
    means = tuple(d.mean_seconds for d in dists)
    most = [int(math.ceil(c - 1e-9)) for c in mean_counts]
    span = sum(k * m for k, m in zip(most, means, strict=True))
    if rate * (duration + span) * sum(most) > MAX_EVENTS:
        raise ValueError(
            f"{rate * duration * sum(most):,.0f} step events exceed the simulator's bound of "
            f"{MAX_EVENTS:,}"
        )
    starts = arrival_times(rng, rate, -span, duration, even)
    runs = starts.size
    tenants = zipf_tenants(rng, load.tenants.count, load.tenants.zipf_s, runs)
    counts = np.stack([_per_run_counts(c, runs) for c in mean_counts], axis=1)

    kinds_all: list[np.ndarray] = []
    time_all: list[np.ndarray] = []
    run_all: list[np.ndarray] = []
    # Runs with the same counts share one template (a fractional mean makes a few distinct ones).
    shapes, which_shape = np.unique(counts, axis=0, return_inverse=True)
    for index, row in enumerate(shapes):
        model, tool, state = (int(x) for x in row)
        which = np.nonzero(which_shape.ravel() == index)[0]
        template = run_template(model, tool, state)
        if template.size == 0:
            continue
        own_span = model * means[0] + tool * means[1] + state * means[2]
        offsets = own_span * np.arange(template.size, dtype=np.float64) / template.size
        t = starts[which][:, None] + offsets[None, :]
        kinds_all.append(np.broadcast_to(template, t.shape).ravel())
        time_all.append(t.ravel())
        run_all.append(np.broadcast_to(which[:, None], t.shape).ravel())
    if time_all:
        kinds = np.concatenate(kinds_all)
        when = np.concatenate(time_all)
        run = np.concatenate(run_all).astype(np.int64)
    else:
        kinds = np.empty(0, dtype=np.int64)
        when = np.empty(0, dtype=np.float64)
        run = np.empty(0, dtype=np.int64)
    inside = (when >= 0.0) & (when < duration)
    kinds, when, run = kinds[inside], when[inside], run[inside]
    order = np.lexsort((run, when))
    kinds, when, run = kinds[order], when[order], run[order]

    groups: dict[str, GroupLoad] = {}
    for kind, name in enumerate(GROUPS):
        mask = kinds == kind
        arr = when[mask]
        groups[name] = GroupLoad(
            name,
            arr,
            step_times(rng, dists[kind], arr.size, scenario.deterministic),
            run[mask],
            tenants[run[mask]] if runs else run[mask],
            dists[kind].mean_seconds,
            rate * mean_counts[kind],
        )
    notes = [
        f"{rate:g} runs/s, each {shape.model_calls:g} model calls, {shape.tool_calls:g} tool calls "
        f"and {shape.state_writes:g} state writes ({shape.note}) over a nominal span of {span:g} s"
    ]
    tokens = load.tokens.input_per_call + load.tokens.output_per_call
    return Workload(duration, groups, tokens, shape.model_calls, notes)


def build_workload(design: Design, scenario: Scenario, rng: np.random.Generator) -> Workload:
    """Generate the scenario's step events for ``design`` with the generator ``rng``.

    Raises ``ValueError`` when the window would hold more than :data:`MAX_EVENTS` step events.
    """
    if scenario.load.step_events_per_second is not None:
        return _single_stage(design, scenario, rng)
    if scenario.load.run_model == "causal":
        return _causal_runs(design, scenario, rng)
    return _runs(design, scenario, rng)
