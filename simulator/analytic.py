"""Closed-form estimates: what the live panel shows while a learner types, and what the
simulator is validated against.

Every function is pure arithmetic (microseconds per call); each docstring names its formula's
source. Units: rates in step events per second (``_eps``), times in seconds (``_s``) unless the
name says ``_ms`` or ``_hours``.

The formulas:

- Little's law, L = lambda W (J. D. C. Little, "A Proof for the Queuing Formula L = lambda W",
  Operations Research 9(3), 1961): events in flight = arrival rate x time in the system.
- Capacity of a consumer group: busy partitions / mean step time, each partition processed one
  event at a time; busy partitions = min(partitions, instances x concurrency per instance).
- Backlog after an outage = arrivals x outage; drain time = backlog / (capacity - arrivals), never
  when capacity <= arrivals (fluid approximation of a queue after a service interruption).
- Erlang B and C (A. K. Erlang, 1917; L. Kleinrock, "Queueing Systems, Volume 1: Theory", Wiley
  1975, ch. 3) for pooled capacity such as a model provider's concurrency limit.
- M/M/1 and M/D/1 (Kleinrock 1975); M/G/1 by the Pollaczek-Khinchine formula (F. Pollaczek 1930,
  A. Y. Khinchine 1932); G/G/1 by Kingman's approximation (J. F. C. Kingman, "The single server
  queue in heavy traffic", Proc. Cambridge Phil. Soc. 57, 1961).

:func:`estimate` puts them together for a :class:`~simulator.design.Design` and a
:class:`~simulator.scenario.Scenario`; see its docstring for the workload rules.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from simulator.design import (
    AssignmentStrategy,
    CommitMode,
    ConsumerGroup,
    Dedupe,
    Design,
    ModelProvider,
    OrchestrationPattern,
    Replication,
)
from simulator.poison import PoisonStall, poison_stall_for_design
from simulator.scenario import (
    ConsumerPause,
    Load,
    Poison,
    ProviderOutage,
    Rebalance,
    Scenario,
    StateFailover,
    StepTime,
    WorkerCrash,
)

GroupName = Literal["agent", "tool", "state"]
GROUPS: tuple[GroupName, ...] = ("agent", "tool", "state")

SINGLE_AGENT_CALL_FACTOR = 4 / 15
"""Model calls of a single agent relative to a multi-agent run: about 4x a chat's tokens against
about 15x for a multi-agent system (Anthropic, "How we built our multi-agent research system",
2025; worked-numbers item 11)."""

_EPS = 1e-12


def _saturated(rho: float) -> bool:
    """rho >= 1, allowing for rounding (1.4 / 0.1 is 13.999999999999998, not 14)."""
    return rho >= 1 - 1e-12


# --------------------------------------------------------------------------------------------
# Little's law, capacity, utilisation, backlog and drain
# --------------------------------------------------------------------------------------------


def little_in_flight(rate_eps: float, time_s: float) -> float:
    """Events in flight L = lambda x W (Little 1961).

    ``little_in_flight(20, 2.0)`` is 40: 20 events/s each taking 2.0 s keep 40 in progress, so at
    least 40 partitions must be busy. Raises ``ValueError`` for a negative rate or time.
    """
    if rate_eps < 0 or time_s < 0:
        raise ValueError("rate and time must be >= 0")
    return rate_eps * time_s


def busy_partitions(partitions: int, instances: int, concurrency_per_instance: int) -> int:
    """Partitions a consumer group can work on at once: min(partitions, instances x concurrency).

    Exact for every Kafka assignor here: each assigns a single topic balanced to within one
    partition per member, and with integer concurrency c either c <= floor(P/I) (every member is
    full: I x c busy) or c >= ceil(P/I) (every partition is busy). Raises ``ValueError`` for a
    negative argument.
    """
    if partitions < 0 or instances < 0 or concurrency_per_instance < 0:
        raise ValueError("partitions, instances and concurrency must be >= 0")
    return min(partitions, instances * concurrency_per_instance)


def capacity_eps(busy: float, step_time_s: float) -> float:
    """Throughput of ``busy`` partitions each processing one event at a time: busy / step time.

    By Little's law with every partition busy (L = busy, W = step time). ``capacity_eps(48, 2.0)``
    is 24 events/s. Raises ``ValueError`` for a step time <= 0 or negative ``busy``.
    """
    if step_time_s <= 0:
        raise ValueError(f"step_time_s must be > 0, got {step_time_s}")
    if busy < 0:
        raise ValueError(f"busy partitions must be >= 0, got {busy}")
    return busy / step_time_s


def utilisation(arrivals_eps: float, capacity: float) -> float:
    """Offered load over capacity, rho = lambda / capacity (0 when idle, ``math.inf`` when there
    is load and no capacity). ``utilisation(20, 24)`` is 0.8333."""
    if arrivals_eps <= 0:
        return 0.0
    if capacity <= 0:
        return math.inf
    return arrivals_eps / capacity


def backlog_after_outage(rate_eps: float, seconds: float, capacity_during: float = 0.0) -> float:
    """Events waiting after ``seconds`` with arrivals ``rate_eps`` and ``capacity_during`` left.

    (rate - capacity during) x seconds, at least 0; with nothing processing, 20 x 180 = 3,600.
    Fluid approximation: arrivals and service at their mean rates. Raises ``ValueError`` for a
    negative argument.
    """
    if rate_eps < 0 or seconds < 0 or capacity_during < 0:
        raise ValueError("rate, seconds and capacity must be >= 0")
    return max(0.0, (rate_eps - capacity_during) * seconds)


def backlog_per_partition(backlog: float, partitions: int) -> float:
    """Backlog spread evenly over partitions: 3,600 / 48 = 75. ``ValueError`` if partitions < 1."""
    if partitions < 1:
        raise ValueError(f"partitions must be >= 1, got {partitions}")
    return backlog / partitions


def drain_seconds(backlog: float, capacity: float, arrivals_eps: float) -> float | None:
    """Seconds to clear ``backlog`` while arrivals continue: backlog / (capacity - arrivals).

    Returns 0.0 for no backlog and ``None`` when capacity <= arrivals: the backlog never drains.
    Worked numbers: 210 / (45 - 30) = 14 s; 3,600 / (24 - 20) = 900 s; capacity 20 = arrivals 20
    gives ``None``. Fluid approximation (mean rates). Raises ``ValueError`` for a negative backlog.
    """
    if backlog < 0:
        raise ValueError(f"backlog must be >= 0, got {backlog}")
    if backlog == 0:
        return 0.0
    headroom = capacity - arrivals_eps
    if headroom <= _EPS * max(1.0, abs(capacity)):
        return None
    return backlog / headroom


def never_drains_note(capacity: float, arrivals_eps: float) -> str:
    """The sentence the product shows when a backlog cannot drain."""
    return (
        f"Never drains: capacity {capacity:.4g} events/s is not above arrivals "
        f"{arrivals_eps:.4g} events/s, so the backlog stays or grows."
    )


# --------------------------------------------------------------------------------------------
# Lag and polling
# --------------------------------------------------------------------------------------------


def partition_lag(log_end_offsets: Sequence[int], committed_offsets: Sequence[int]) -> list[int]:
    """Consumer lag per partition: log-end offset - committed offset.

    The Kafka tooling shows LOG-END-OFFSET, CURRENT-OFFSET and LAG per partition; lag as their
    difference. ``partition_lag([1200, 1180, 1260], [1150, 1180, 1100])`` is ``[50, 0, 160]``.
    Raises ``ValueError`` for lists of different lengths or a committed offset past the log end.
    """
    if len(log_end_offsets) != len(committed_offsets):
        raise ValueError("one committed offset per log-end offset")
    lags = [
        end - committed for end, committed in zip(log_end_offsets, committed_offsets, strict=True)
    ]
    if any(lag < 0 for lag in lags):
        raise ValueError("a committed offset lies past its log-end offset")
    return lags


def total_lag(log_end_offsets: Sequence[int], committed_offsets: Sequence[int]) -> int:
    """Sum of :func:`partition_lag`: 50 + 0 + 160 = 210 for the worked example."""
    return sum(partition_lag(log_end_offsets, committed_offsets))


def batch_seconds(records: int, step_time_s: float, concurrency: int = 1) -> float:
    """Time to process one poll batch: ceil(records / concurrency) x step time.

    A batch of 50 at 2 s each, one at a time, takes 100 s. Raises ``ValueError`` for negative
    records or step time, or concurrency < 1.
    """
    if records < 0 or step_time_s < 0:
        raise ValueError("records and step time must be >= 0")
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    return math.ceil(records / concurrency) * step_time_s


def poll_interval_exceeded(
    records: int,
    step_time_s: float,
    max_poll_interval_ms: float = 300_000,
    concurrency: int = 1,
) -> bool:
    """True when processing a batch takes longer than max.poll.interval.ms (Kafka default 300000).

    Kafka treats a consumer that does not call poll() within max.poll.interval.ms as failed: it is
    removed from the group and its partitions (and uncommitted batch) go to another member.
    50 x 2 s = 100 s is fine; 50 x 7 s = 350 s > 300 s: kicked.
    """
    return batch_seconds(records, step_time_s, concurrency) * 1000.0 > max_poll_interval_ms


# --------------------------------------------------------------------------------------------
# Restarts and the outbox
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rework:
    """Work repeated after a restart: events redelivered, worker-seconds, model calls and the same
    work expressed as seconds of the whole fleet (worker-seconds / busy partitions)."""

    redelivered: int
    worker_seconds: float
    model_calls: int
    fleet_seconds: float


def redelivered_bound(instances: int, max_poll_records: int) -> int:
    """Most events redelivered when ``instances`` crash, committing after every batch.

    Each instance holds at most one uncommitted batch of max.poll.records: 4 x 50 = 200.
    """
    if instances < 0 or max_poll_records < 0:
        raise ValueError("instances and max_poll_records must be >= 0")
    return instances * max_poll_records


def restart_rework(
    instances: int,
    max_poll_records: int,
    step_time_s: float,
    busy: int,
    model_calls_per_event: int = 1,
) -> Rework:
    """Cost of redelivery without dedupe: 200 events x 2.0 s = 400 worker-seconds, 200 model calls,
    400 / 48 = 8.3 s of whole-fleet time (worked example; one model call per agent step)."""
    redelivered = redelivered_bound(instances, max_poll_records)
    worker_s = redelivered * step_time_s
    return Rework(
        redelivered=redelivered,
        worker_seconds=worker_s,
        model_calls=redelivered * model_calls_per_event,
        fleet_seconds=worker_s / busy if busy > 0 else math.inf,
    )


@dataclass(frozen=True)
class OutboxDelay:
    """Delay an outbox polling relay adds to publishing, in milliseconds."""

    mean_ms: float
    worst_ms: float


def outbox_relay_delay(
    poll_interval_ms: float, query_ms: float = 0.0, publish_ms: float = 0.0
) -> OutboxDelay:
    """Added delay of an outbox relay that polls every T ms.

    A row written at a uniformly random moment waits T/2 on average and T at worst for the next
    poll, plus the relay's query and publish time: T = 500 ms gives a mean of 250 ms and a worst
    case of about 500 ms + query + publish (uniform arrival within a polling period).
    """
    if poll_interval_ms <= 0 or query_ms < 0 or publish_ms < 0:
        raise ValueError("poll interval must be > 0; query and publish times >= 0")
    extra = query_ms + publish_ms
    return OutboxDelay(mean_ms=poll_interval_ms / 2 + extra, worst_ms=poll_interval_ms + extra)


# --------------------------------------------------------------------------------------------
# Queueing theory
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class QueueWaits:
    """Mean wait in queue ``wq`` and mean time in system ``w`` (same time unit as the rates).
    Both are ``math.inf`` when the queue is unstable (rho >= 1)."""

    rho: float
    wq: float
    w: float


def _rates(arrival: float, service: float) -> float:
    if arrival < 0:
        raise ValueError(f"arrival rate must be >= 0, got {arrival}")
    if service <= 0:
        raise ValueError(f"service rate must be > 0, got {service}")
    return arrival / service


def mm1(arrival_rate: float, service_rate: float) -> QueueWaits:
    """M/M/1: Wq = rho / (mu - lambda), W = 1 / (mu - lambda) (Kleinrock 1975, sec. 3.2).

    Arrival 3/s, service 5/s: Wq = 0.3 s, W = 0.5 s. Unstable (rho >= 1) gives ``inf``.
    """
    rho = _rates(arrival_rate, service_rate)
    if _saturated(rho):
        return QueueWaits(rho, math.inf, math.inf)
    wq = rho / (service_rate - arrival_rate)
    return QueueWaits(rho, wq, wq + 1 / service_rate)


def md1(arrival_rate: float, service_rate: float) -> QueueWaits:
    """M/D/1 (constant service): Wq = rho / (2 mu (1 - rho)), half the M/M/1 wait.

    The Pollaczek-Khinchine formula with zero service variance. Arrival 20/h, service 30/h:
    Wq = 0.0333 h. Unstable gives ``inf``.
    """
    rho = _rates(arrival_rate, service_rate)
    if _saturated(rho):
        return QueueWaits(rho, math.inf, math.inf)
    wq = rho / (2 * service_rate * (1 - rho))
    return QueueWaits(rho, wq, wq + 1 / service_rate)


def mg1_wait(arrival_rate: float, mean_service: float, service_scv: float) -> float:
    """M/G/1 mean wait in queue by Pollaczek-Khinchine: Wq = rho (1 + Cs^2) E[S] / (2 (1 - rho)).

    ``service_scv`` is the squared coefficient of variation of the service time (0 constant,
    1 exponential, exp(sigma^2) - 1 lognormal). Returns ``inf`` when rho >= 1.
    """
    if mean_service <= 0:
        raise ValueError(f"mean_service must be > 0, got {mean_service}")
    return kingman_wait(arrival_rate, mean_service, 1.0, service_scv)


def kingman_wait(
    arrival_rate: float, mean_service: float, arrival_scv: float, service_scv: float
) -> float:
    """G/G/1 mean wait in queue by Kingman's approximation (Kingman 1961):
    Wq ~ rho / (1 - rho) x (Ca^2 + Cs^2) / 2 x E[S].

    Exact for M/G/1 (Ca^2 = 1, the Pollaczek-Khinchine formula) and zero for evenly spaced arrivals
    with constant service (D/D/1). Returns ``inf`` when rho >= 1.
    """
    if mean_service <= 0:
        raise ValueError(f"mean_service must be > 0, got {mean_service}")
    if arrival_scv < 0 or service_scv < 0:
        raise ValueError("squared coefficients of variation must be >= 0")
    rho = _rates(arrival_rate, 1 / mean_service)
    if _saturated(rho):
        return math.inf
    return rho / (1 - rho) * (arrival_scv + service_scv) / 2 * mean_service


def erlang_b(offered_load_erlangs: float, servers: int) -> float:
    """Erlang B blocking probability by the stable recursion B(0) = 1,
    B(k) = a B(k-1) / (k + a B(k-1)) (Erlang 1917; Kleinrock 1975, sec. 3.7)."""
    if offered_load_erlangs < 0:
        raise ValueError(f"offered load must be >= 0, got {offered_load_erlangs}")
    if servers < 0:
        raise ValueError(f"servers must be >= 0, got {servers}")
    a = offered_load_erlangs
    b = 1.0
    for k in range(1, servers + 1):
        b = a * b / (k + a * b)
    return b


def erlang_c(offered_load_erlangs: float, servers: int) -> float:
    """Probability that an arrival waits in an M/M/c queue (Erlang C).

    Computed stably from Erlang B: C = c B / (c - a (1 - B)) (Kleinrock 1975, sec. 3.5).
    a = 10 Erlang, c = 14 gives 0.1741319. Returns 1.0 when a >= c (every arrival waits).
    Raises ``ValueError`` for c < 1 or a < 0.
    """
    if servers < 1:
        raise ValueError(f"servers must be >= 1, got {servers}")
    a = offered_load_erlangs
    if _saturated(a / servers):
        return 1.0
    b = erlang_b(a, servers)
    return servers * b / (servers - a * (1 - b))


def mmc_wait_seconds(arrival_rate: float, service_rate_per_server: float, servers: int) -> float:
    """M/M/c mean wait in queue: Wq = C(c, a) / (c mu - lambda), a = lambda / mu.

    Arrival 0.2, mu 0.1, c = 3: P(wait) = 4/9, Wq = 4.4444; c = 4: Wq = 0.869565 (time unit of
    the rates). Returns ``inf`` when lambda >= c mu.
    """
    a = _rates(arrival_rate, service_rate_per_server)
    if servers < 1:
        raise ValueError(f"servers must be >= 1, got {servers}")
    if _saturated(a / servers):
        return math.inf
    return erlang_c(a, servers) / (servers * service_rate_per_server - arrival_rate)


def step_time_scv(step: StepTime) -> float:
    """Squared coefficient of variation of a step-time distribution: constant 0, exponential 1,
    lognormal exp(sigma^2) - 1 (the lognormal's variance over its squared mean)."""
    if step.distribution == "constant":
        return 0.0
    if step.distribution == "exponential":
        return 1.0
    return math.expm1(step.sigma**2)


# --------------------------------------------------------------------------------------------
# The model provider
# --------------------------------------------------------------------------------------------


def tokens_per_minute(
    model_calls_per_second: float, input_per_call: int, output_per_call: int
) -> float:
    """Tokens a minute at a call rate: calls/s x (input + output tokens) x 60.

    10 calls/s x (1,500 + 300) x 60 = 1,080,000 tokens a minute.
    """
    return model_calls_per_second * (input_per_call + output_per_call) * 60.0


def provider_capacity_eps(
    provider: ModelProvider, call_seconds: float, tokens_per_call: int
) -> dict[str, float]:
    """A provider's ceilings on model calls per second, by limit.

    ``concurrency``: max_concurrency / call time (Little); ``rpm``: rpm / 60; ``tpm``:
    tpm / 60 / tokens per call (no ceiling when a call has no tokens).
    """
    limits = {
        "concurrency": provider.max_concurrency / call_seconds,
        "rpm": provider.rpm / 60.0,
    }
    limits["tpm"] = provider.tpm / 60.0 / tokens_per_call if tokens_per_call > 0 else math.inf
    return limits


# --------------------------------------------------------------------------------------------
# The workload a design and a scenario produce
# --------------------------------------------------------------------------------------------


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid", ser_json_inf_nan="null")


class RunFanOut(_Out):
    """Step events one run produces after the design's orchestration rules (expected values)."""

    model_calls: float
    tool_calls: float
    state_writes: float
    factor: float = Field(description="Multiplier on the scenario's planned model calls.")
    tokens_per_run: float
    note: str

    @property
    def step_events(self) -> float:
        """Model calls + tool calls + state writes."""
        return self.model_calls + self.tool_calls + self.state_writes


def fan_out_per_run(design: Design, load: Load) -> RunFanOut:
    """Apply the design's orchestration to the scenario's planned fan-out (20 / 12 / 40).

    The rule, kept simple and shared by the estimate and the simulator:

    - ``orchestrator_worker``: the orchestrator plans the fan-out, so a run makes the planned calls.
    - ``peer_agents`` without ``max_subagents``: peers spawn peers; a run makes
      ``uncapped_peer_multiplier`` times the planned model calls, tool calls and state writes.
      With a cap, the planned figures hold.
    - ``single_agent``: one agent does the work in one context: model calls x 4/15 (about 4x a
      chat's tokens against 15x for multi-agent runs); tool calls and state writes as planned.
    - ``token_budget_per_run``: a run stops when its tokens run out, so model calls per run are at
      most budget / (input + output tokens per call).
    """
    fan = load.fan_out
    orch = design.orchestration
    tokens_per_call = load.tokens.input_per_call + load.tokens.output_per_call
    model_calls = float(fan.model_calls)
    tool_calls = float(fan.tool_calls)
    state_writes = float(fan.state_writes)
    notes: list[str] = []
    if orch.pattern is OrchestrationPattern.peer_agents and orch.max_subagents is None:
        m = fan.uncapped_peer_multiplier
        model_calls *= m
        tool_calls *= m
        state_writes *= m
        notes.append(f"peer agents without a cap: x{m:g} the planned step events")
    elif orch.pattern is OrchestrationPattern.single_agent:
        model_calls *= SINGLE_AGENT_CALL_FACTOR
        notes.append("single agent: 4/15 of the planned model calls")
    else:
        notes.append("planned fan-out")
    if orch.token_budget_per_run is not None and tokens_per_call > 0:
        most = orch.token_budget_per_run / tokens_per_call
        if model_calls > most:
            notes.append(
                f"token budget {orch.token_budget_per_run:,} stops a run after {most:.1f} calls"
            )
            model_calls = most
    return RunFanOut(
        model_calls=model_calls,
        tool_calls=tool_calls,
        state_writes=state_writes,
        factor=model_calls / fan.model_calls if fan.model_calls else 1.0,
        tokens_per_run=model_calls * tokens_per_call,
        note="; ".join(notes),
    )


# --------------------------------------------------------------------------------------------
# The estimate
# --------------------------------------------------------------------------------------------


class LimitingFactor(StrEnum):
    """What caps a consumer group's capacity."""

    partitions = "partitions"
    instances = "instances x concurrency"
    provider_concurrency = "provider concurrency"
    rpm = "RPM"
    tpm = "TPM"
    state_write_capacity = "state write capacity"
    tool_runners = "tool runners"


class GroupEstimate(_Out):
    """One consumer group's closed-form figures.

    ``in_flight`` is Little's law with the step time (events being processed at once, the
    concurrency the load needs); ``partitions_needed`` is that rounded up. ``limits_eps`` lists
    every ceiling on capacity; the smallest is ``capacity_eps`` and names ``limiting_factor``.
    ``backlog`` is what the scenario's worst outage for this group leaves (``outage`` names the
    fault kind); ``drain_seconds`` is ``None`` when it never drains (``drain_note`` says why).
    ``backlog_growth_eps`` > 0 means arrivals exceed capacity with no fault at all.
    """

    group: GroupName
    arrivals_eps: float
    step_time_s: float
    partitions: int
    instances: int
    concurrency_per_instance: int
    busy_partitions: int
    limits_eps: dict[str, float]
    capacity_eps: float
    limiting_factor: LimitingFactor
    utilisation: float
    in_flight: float
    partitions_needed: int
    partition_wait_s: float | None = Field(
        description="Mean wait in a partition's queue before processing (Kingman's G/G/1, exact "
        "Pollaczek-Khinchine for Poisson arrivals); None when the group is saturated."
    )
    latency_mean_s: float | None
    backlog_growth_eps: float
    outage: str | None = None
    outage_seconds: float = 0.0
    backlog: float = 0.0
    backlog_per_partition: float = 0.0
    drain_seconds: float | None = 0.0
    drain_note: str | None = None
    redelivered_max: int = 0
    lost_max: int = 0


class ModelLoad(_Out):
    """Model-provider load at the scenario's rate, against the primary provider's limits."""

    model_calls_per_second: float
    requests_per_minute: float
    rpm_limit: int
    rpm_utilisation: float
    input_tokens_per_minute: float
    output_tokens_per_minute: float
    tokens_per_minute: float
    tpm_limit: int
    tpm_utilisation: float
    concurrency_needed: float
    max_concurrency: int
    wait_probability: float = Field(description="Erlang C with c = max_concurrency.")
    wait_s: float | None = Field(description="M/M/c mean wait for a free slot; None if unstable.")


class Estimate(_Out):
    """The closed-form estimate of a design under a scenario (see :func:`estimate`)."""

    scenario: str
    mode: Literal["runs", "step_events"]
    runs_per_second: float | None
    fan_out: RunFanOut | None
    by_group: dict[str, GroupEstimate]
    bottleneck: GroupName
    limiting_factor: LimitingFactor
    capacity_eps: float
    utilisation: float
    in_flight: float = Field(description="Events in flight in all groups (Little's law).")
    model: ModelLoad
    backlog: float = Field(description="Backlog of ``drain_group`` after its outage.")
    drain_group: GroupName | None
    drain_seconds: float | None
    drain_note: str | None
    state_writes_at_risk: float = Field(
        0.0, description="Acknowledged writes inside the async replication lag at a failover."
    )
    poison: PoisonStall | None = None
    notes: list[str] = Field(default_factory=list)


def _group_arrivals(
    design: Design, load: Load
) -> tuple[dict[GroupName, float], RunFanOut | None, float | None]:
    if load.step_events_per_second is not None:
        return {"agent": load.step_events_per_second, "tool": 0.0, "state": 0.0}, None, None
    r = load.runs_per_second or 0.0
    fan = fan_out_per_run(design, load)
    arrivals: dict[GroupName, float] = {
        "agent": r * fan.model_calls,
        "tool": r * fan.tool_calls,
        "state": r * fan.state_writes,
    }
    return arrivals, fan, r


def _step(load: Load, group: GroupName, deterministic: bool) -> tuple[float, float]:
    st = {
        "agent": load.step_time.agent_step,
        "tool": load.step_time.tool_call,
        "state": load.step_time.state_write,
    }[group]
    return st.mean_seconds, 0.0 if deterministic else step_time_scv(st)


def _limits(
    design: Design,
    group: GroupName,
    cg: ConsumerGroup,
    instances: int,
    step_s: float,
    tokens_per_call: int,
    provider: ModelProvider | None,
) -> dict[str, float]:
    partitions = design.event_log.partitions
    slots = instances * cg.concurrency_per_instance
    limits: dict[str, float] = {}
    if partitions <= slots:
        limits[LimitingFactor.partitions.value] = capacity_eps(partitions, step_s)
    else:
        limits[LimitingFactor.instances.value] = capacity_eps(slots, step_s)
    if group == "agent" and provider is not None:
        p = provider_capacity_eps(provider, step_s, tokens_per_call)
        limits[LimitingFactor.provider_concurrency.value] = p["concurrency"]
        limits[LimitingFactor.rpm.value] = p["rpm"]
        limits[LimitingFactor.tpm.value] = p["tpm"]
    elif group == "tool":
        runners = design.tools.runners * design.tools.concurrency_per_runner
        limits[LimitingFactor.tool_runners.value] = capacity_eps(runners, step_s)
    elif group == "state":
        limits[LimitingFactor.state_write_capacity.value] = (
            design.state_store.write_capacity_per_second
        )
    return limits


def _capacity(limits: dict[str, float]) -> tuple[float, LimitingFactor]:
    best_name = next(iter(limits))
    best = limits[best_name]
    for name, value in limits.items():
        if value < best:
            best_name, best = name, value
    return best, LimitingFactor(best_name)


def _owned_by_first(partitions: int, members: int, first: int) -> int:
    """Partitions owned by the first ``first`` of ``members`` (ids in order) after a fresh
    assignment: every assignor here gives member i floor(P/I) + (1 if i < P mod I)."""
    if members <= 0:
        return 0
    per, extra = divmod(partitions, members)
    first = min(first, members)
    return first * per + min(first, extra)


@dataclass
class _Outage:
    kind: str
    seconds: float
    backlog: float
    capacity_after: float
    redelivered: int = 0
    lost: int = 0


def estimate(design: Design, scenario: Scenario) -> Estimate:
    """Closed-form figures for ``design`` under ``scenario``: per consumer group arrivals,
    capacity, utilisation, in-flight events, per-partition wait, backlog after the scenario's
    outages and the time to drain it, the bottleneck and what limits it, and the model load.

    Workload rules:

    - ``load.step_events_per_second``: every step event goes to the agent group (one model call
      per agent step); the tool and state groups are idle.
    - ``load.runs_per_second`` r: agent arrivals r x model calls, tool r x tool calls, state
      r x state writes per run, after :func:`fan_out_per_run`.
    - Each group reads its own topic of ``event_log.partitions`` partitions; events spread evenly
      (hot keys are the simulator's business).
    - Capacity ceilings: partitions or instances x concurrency (whichever is smaller) / step
      time; agent group also the primary provider's max_concurrency / step time, RPM / 60 and
      TPM / 60 / tokens per call; tool group the runner fleet (runners x concurrency / step
      time); state group the store's write capacity.
    - Outages (the worst per group is kept): ``worker_crash`` of all instances stops the group;
      of some, their partitions stall until session.timeout.ms notices, then the survivors carry
      every partition; ``consumer_pause`` stops the group; ``provider_outage`` of the primary
      stops the agent group unless a fallback with a circuit breaker carries it at the fallback's
      limits; ``state_failover`` stops the state group for the design's failover time;
      ``rebalance`` pauses every partition (eager: range, round robin) or only the partitions of
      the member that leaves (cooperative sticky) for ``pause_seconds``.
    - Redelivery after a crash, per crashed instance: commit after processing redelivers at most
      one batch (max.poll.records), losing nothing; commit before processing loses up to a batch;
      auto-commit may redeliver a batch plus one interval's work and lose up to a batch.

    The agent step time stands for a model call's latency when the provider's concurrency limit
    is applied. Deterministic scenarios (even arrivals, constant step times) have no queueing
    wait below saturation. Never raises for a valid design and scenario.
    """
    load = scenario.load
    notes: list[str] = []
    arrivals, fan, runs = _group_arrivals(design, load)
    mode: Literal["runs", "step_events"] = "step_events" if fan is None else "runs"
    tokens_per_call = load.tokens.input_per_call + load.tokens.output_per_call
    arrival_scv = 0.0 if scenario.deterministic or load.arrivals == "even" else 1.0
    primary = design.model.primary
    fallback = design.model.fallback
    fallback_on = fallback.enabled and design.model.circuit_breaker.enabled

    groups: dict[str, GroupEstimate] = {}
    worst_drain: tuple[int, float, GroupName] | None = None
    for name in GROUPS:
        cg: ConsumerGroup = getattr(design.consumers, name)
        lam = arrivals[name]
        step_s, service_scv = _step(load, name, scenario.deterministic)
        partitions = design.event_log.partitions
        limits = _limits(design, name, cg, cg.instances, step_s, tokens_per_call, primary)
        cap, factor = _capacity(limits)
        rho = utilisation(lam, cap)
        in_flight = little_in_flight(lam, step_s)
        busy = busy_partitions(partitions, cg.instances, cg.concurrency_per_instance)

        # Per-partition queue: arrivals lambda / P, one event at a time at the step time; when
        # fewer slots than partitions, partitions share the slots (service step x P / busy).
        # Provider-side waits are reported separately (``ModelLoad``).
        wait: float | None
        if lam <= 0:
            wait = 0.0
        elif busy <= 0 or _saturated(rho):
            wait = None
        else:
            eff_service = step_s * partitions / busy
            w = kingman_wait(lam / partitions, eff_service, arrival_scv, service_scv)
            wait = None if math.isinf(w) else w
        latency = None if wait is None else wait + step_s

        outages: list[_Outage] = []
        for fault in scenario.faults:
            o = _outage_for(fault, name, design, cg, lam, cap, step_s, tokens_per_call, fallback_on)
            if o is not None:
                outages.append(o)
        worst = max(outages, key=lambda o: o.backlog, default=None)

        g = GroupEstimate(
            group=name,
            arrivals_eps=lam,
            step_time_s=step_s,
            partitions=partitions,
            instances=cg.instances,
            concurrency_per_instance=cg.concurrency_per_instance,
            busy_partitions=busy,
            limits_eps=limits,
            capacity_eps=cap,
            limiting_factor=factor,
            utilisation=rho,
            in_flight=in_flight,
            partitions_needed=math.ceil(in_flight - 1e-9) if in_flight > 0 else 0,
            partition_wait_s=wait,
            latency_mean_s=latency,
            backlog_growth_eps=max(0.0, lam - cap),
        )
        if lam > 0 and _saturated(rho):
            g.drain_seconds = None
            g.drain_note = never_drains_note(cap, lam)
        if worst is not None:
            g.outage = worst.kind
            g.outage_seconds = worst.seconds
            g.backlog = worst.backlog
            g.backlog_per_partition = backlog_per_partition(worst.backlog, partitions)
            g.redelivered_max = worst.redelivered
            g.lost_max = worst.lost
            if g.drain_seconds is not None:  # not saturated before the fault either
                d = drain_seconds(worst.backlog, worst.capacity_after, lam)
                g.drain_seconds = d
                g.drain_note = never_drains_note(worst.capacity_after, lam) if d is None else None
        groups[name] = g
        if g.backlog > 0 or g.drain_seconds is None:
            rank = (1 if g.drain_seconds is None else 0, g.drain_seconds or 0.0, name)
            if worst_drain is None or rank[:2] > worst_drain[:2]:
                worst_drain = rank

    bottleneck: GroupName = "agent"
    for name in GROUPS:
        if groups[name].utilisation > groups[bottleneck].utilisation:
            bottleneck = name
    b = groups[bottleneck]

    model_eps = arrivals["agent"]
    rpm_needed = model_eps * 60.0
    tpm_needed = tokens_per_minute(
        model_eps, load.tokens.input_per_call, load.tokens.output_per_call
    )
    agent_step = groups["agent"].step_time_s
    conc_needed = model_eps * agent_step
    p_wait = erlang_c(conc_needed, primary.max_concurrency) if model_eps > 0 else 0.0
    mmc = (
        mmc_wait_seconds(model_eps, 1 / agent_step, primary.max_concurrency)
        if model_eps > 0
        else 0.0
    )
    model = ModelLoad(
        model_calls_per_second=model_eps,
        requests_per_minute=rpm_needed,
        rpm_limit=primary.rpm,
        rpm_utilisation=rpm_needed / primary.rpm,
        input_tokens_per_minute=model_eps * load.tokens.input_per_call * 60.0,
        output_tokens_per_minute=model_eps * load.tokens.output_per_call * 60.0,
        tokens_per_minute=tpm_needed,
        tpm_limit=primary.tpm,
        tpm_utilisation=tpm_needed / primary.tpm,
        concurrency_needed=conc_needed,
        max_concurrency=primary.max_concurrency,
        wait_probability=p_wait,
        wait_s=None if math.isinf(mmc) else mmc,
    )

    at_risk = 0.0
    failover = any(isinstance(f, StateFailover) for f in scenario.faults)
    if failover and design.state_store.replication is Replication.async_:
        lag_ms = design.state_store.replication_lag_ms
        at_risk = arrivals["state"] * lag_ms / 1000.0
        rebuilt = (
            "rebuilt from the event log" if design.data_model.state_rebuildable_from_log else "lost"
        )
        notes.append(
            f"Async replication: about {at_risk:.4g} acknowledged state writes inside the "
            f"{lag_ms:g} ms lag window are {rebuilt} at failover."
        )
    poison: PoisonStall | None = None
    for fault in scenario.faults:
        if isinstance(fault, Poison):
            pg = groups[fault.group]
            poison = poison_stall_for_design(design.failures, pg.arrivals_eps, pg.partitions)
            notes.append(f"Poison messages in the {fault.group} group: {poison.note}")
            break
    others = sorted({f.kind for f in scenario.faults if f.kind == "broker_loss"})
    if others:
        notes.append("Broker loss is not in the estimate; run the simulation.")
    if mode == "step_events":
        notes.append("Step events go straight to the agent group; tool and state groups are idle.")
    if fan is not None:
        notes.append(f"Fan-out per run: {fan.note}.")

    if worst_drain is None:
        drain_group: GroupName | None = None
        backlog = 0.0
        drain_s: float | None = 0.0
        drain_note: str | None = None
    else:
        drain_group = worst_drain[2]
        dg = groups[drain_group]
        backlog, drain_s, drain_note = dg.backlog, dg.drain_seconds, dg.drain_note

    return Estimate(
        scenario=scenario.name,
        mode=mode,
        runs_per_second=runs,
        fan_out=fan,
        by_group=groups,
        bottleneck=bottleneck,
        limiting_factor=b.limiting_factor,
        capacity_eps=b.capacity_eps,
        utilisation=b.utilisation,
        in_flight=sum(g.in_flight for g in groups.values()),
        model=model,
        backlog=backlog,
        drain_group=drain_group,
        drain_seconds=drain_s,
        drain_note=drain_note,
        state_writes_at_risk=at_risk,
        poison=poison,
        notes=notes,
    )


def _outage_for(
    fault: object,
    group: GroupName,
    design: Design,
    cg: ConsumerGroup,
    lam: float,
    cap: float,
    step_s: float,
    tokens_per_call: int,
    fallback_on: bool,
) -> _Outage | None:
    """Backlog a fault leaves in ``group`` and the capacity that drains it."""
    if isinstance(fault, WorkerCrash) and fault.group == group:
        total = cg.instances
        crashed = total if fault.instances == "all" else min(int(fault.instances), total)
        alive = total - crashed
        seconds = fault.duration_seconds
        if crashed == 0:
            return None
        if alive == 0:
            backlog = backlog_after_outage(lam, seconds)
        else:
            # Partitions of the crashed members stall until the group notices (session timeout),
            # then the survivors take every partition.
            share = (
                _owned_by_first(design.event_log.partitions, total, crashed)
                / design.event_log.partitions
            )
            noticed = min(seconds, cg.session_timeout_ms / 1000.0)
            backlog = share * lam * noticed
            alive_limits = _limits(
                design, group, cg, alive, step_s, tokens_per_call, design.model.primary
            )
            alive_cap, _ = _capacity(alive_limits)
            backlog = max(0.0, backlog + (lam - alive_cap) * (seconds - noticed))
        redelivered, lost = _crash_redelivery(design, cg, crashed, lam, total)
        return _Outage("worker_crash", seconds, backlog, cap, redelivered, lost)
    if isinstance(fault, ConsumerPause) and fault.group == group:
        seconds = fault.duration_seconds
        return _Outage("consumer_pause", seconds, backlog_after_outage(lam, seconds), cap)
    if isinstance(fault, ProviderOutage) and group == "agent":
        seconds = fault.duration_seconds
        if fault.provider == "fallback":
            return None
        during = 0.0
        if fallback_on:
            fb_limits = _limits(
                design, group, cg, cg.instances, step_s, tokens_per_call, design.model.fallback
            )
            during, _ = _capacity(fb_limits)
        return _Outage("provider_outage", seconds, backlog_after_outage(lam, seconds, during), cap)
    if isinstance(fault, StateFailover) and group == "state":
        seconds = design.state_store.failover_seconds
        return _Outage("state_failover", seconds, backlog_after_outage(lam, seconds), cap)
    if isinstance(fault, Rebalance) and fault.group == group:
        partitions = design.event_log.partitions
        if cg.assignment is AssignmentStrategy.cooperative_sticky and cg.instances >= 2:
            share = _owned_by_first(partitions, cg.instances, 1) / partitions
        else:
            share = 1.0
        seconds = fault.pause_seconds
        return _Outage("rebalance", seconds, share * backlog_after_outage(lam, seconds), cap)
    return None


def _crash_redelivery(
    design: Design, cg: ConsumerGroup, crashed: int, lam: float, instances: int
) -> tuple[int, int]:
    batch = redelivered_bound(crashed, cg.max_poll_records)
    commit = design.delivery.commit
    if commit is CommitMode.after_processing:
        return batch, 0
    if commit is CommitMode.before_processing:
        return 0, batch
    per_instance = lam / instances if instances else 0.0
    interval_work = math.ceil(per_instance * design.delivery.auto_commit_interval_ms / 1000.0)
    return batch + crashed * interval_work, batch


def effects_repeat_after_crash(design: Design) -> bool:
    """True when redelivered events repeat their effects: no dedupe, or dedupe kept in memory
    (forgotten by the crash). Durable dedupe in the same transaction turns repeats into lookups."""
    return design.delivery.dedupe is not Dedupe.durable_same_transaction
