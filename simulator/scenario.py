"""The scenario file (contract 2): the load, its duration and seed, and the faults to inject.

Times are seconds from the start of the simulated window. A scenario drives either whole runs
(``load.runs_per_second``; each run fans out into model calls, tool calls and state writes) or,
for single-stage exercises such as the worked sizing example, step events straight into the agent
consumer group (``load.step_events_per_second``).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from simulator.groups import GroupName

MAX_DURATION_SECONDS = 7 * 24 * 3600


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


class StepTime(_Part):
    """A step-time distribution in seconds.

    constant: always ``mean_seconds``; exponential: mean ``mean_seconds``; lognormal: mean
    ``mean_seconds`` with shape ``sigma`` (the underlying normal's standard deviation).
    """

    distribution: Literal["constant", "exponential", "lognormal"] = "lognormal"
    mean_seconds: float = Field(gt=0, le=3600)
    sigma: float = Field(0.5, ge=0, le=3)


class StepTimes(_Part):
    """Step-time distributions per kind of step event."""

    agent_step: StepTime = Field(default_factory=lambda: StepTime(mean_seconds=2.0))
    tool_call: StepTime = Field(default_factory=lambda: StepTime(mean_seconds=0.5))
    state_write: StepTime = Field(
        default_factory=lambda: StepTime(distribution="exponential", mean_seconds=0.01)
    )


class FanOut(_Part):
    """Step events one run produces (seed 003: about 20 model calls, 12 tool calls, 40 writes)."""

    model_calls: int = Field(20, ge=0, le=10_000)
    tool_calls: int = Field(12, ge=0, le=10_000)
    state_writes: int = Field(40, ge=0, le=10_000)
    uncapped_peer_multiplier: float = Field(
        2.5,
        ge=1,
        le=100,
        description="Peer agents without a fan-out cap spawn this many times the planned calls.",
    )

    @property
    def step_events_per_run(self) -> int:
        """Step events per run: model calls + tool calls + state writes (72 by default)."""
        return self.model_calls + self.tool_calls + self.state_writes


class Tokens(_Part):
    """Tokens per model call."""

    input_per_call: int = Field(1500, ge=0, le=10_000_000)
    output_per_call: int = Field(300, ge=0, le=10_000_000)


class Tenants(_Part):
    """Runs belong to tenants with a Zipf spread (rank k has weight 1 / k**zipf_s)."""

    count: int = Field(200, ge=1, le=1_000_000)
    zipf_s: float = Field(1.1, ge=0, le=5)


class ProfileBlock(_Part):
    """A block of hours in the day at one load."""

    hours: float = Field(gt=0, le=24)
    runs_per_second: float = Field(ge=0, le=10_000)


class MonthlyRepeats(_Part):
    """Incidents per day that cause repeated work, multiplied out by the cost model."""

    deploys_per_day: float = Field(1, ge=0, le=1000)
    worker_crashes_per_day: float = Field(0.5, ge=0, le=1000)
    rebalances_per_day: float = Field(4, ge=0, le=100_000)
    provider_outage_minutes_per_month: float = Field(30, ge=0, le=43_200)


class Load(_Part):
    """Offered load: runs (fanning out) or step events per second directly."""

    runs_per_second: float | None = Field(0.5, ge=0, le=10_000)
    step_events_per_second: float | None = Field(None, ge=0, le=1_000_000)
    arrivals: Literal["poisson", "even"] = "poisson"
    run_model: Literal["open_loop", "causal"] = Field(
        "open_loop",
        description="open_loop: a run's step events arrive on a fixed schedule whatever happens "
        "to its earlier steps; causal: each run is a task graph whose next step event is "
        "produced only when the step before it has been applied (simulator/engine/causal.py).",
    )
    fan_out: FanOut = Field(default_factory=FanOut)
    step_time: StepTimes = Field(default_factory=StepTimes)
    tokens: Tokens = Field(default_factory=Tokens)
    tenants: Tenants = Field(default_factory=Tenants)
    daily_profile: list[ProfileBlock] = Field(
        default_factory=lambda: [
            ProfileBlock(hours=3, runs_per_second=0.5),
            ProfileBlock(hours=21, runs_per_second=0.1),
        ],
        description="Blocks that add up to 24 h; the cost model prices a month of them.",
    )
    days_per_month: float = Field(30, gt=0, le=31)
    repeats: MonthlyRepeats = Field(default_factory=MonthlyRepeats)

    @model_validator(mode="after")
    def _one_rate(self) -> Load:
        if (self.runs_per_second is None) == (self.step_events_per_second is None):
            raise ValueError("give exactly one of runs_per_second and step_events_per_second")
        total = sum(b.hours for b in self.daily_profile)
        if self.daily_profile and abs(total - 24) > 1e-6:
            raise ValueError(f"daily_profile hours add up to {total:g}, not 24")
        return self


class _Fault(_Part):
    at_seconds: float = Field(0, ge=0, le=MAX_DURATION_SECONDS)


class WorkerCrash(_Fault):
    """Instances of a consumer group stop for ``duration_seconds``; uncommitted work is redelivered.

    ``instances`` is a count (the first N members) or "all". ``mid_batch`` kills them with a
    fetched batch half done. ``after_effect`` times each member's death to the worst instant a
    long-running system meets sooner or later: right after its next step's effect is written and
    before that step's offset is committed.
    """

    kind: Literal["worker_crash"]
    group: GroupName = "agent"
    instances: int | Literal["all"] = "all"
    duration_seconds: float = Field(180, ge=0, le=MAX_DURATION_SECONDS)
    mid_batch: bool = True
    after_effect: bool = Field(
        False,
        description="Each crashed member dies at the end of its first step to finish at or after "
        "at_seconds, its effect written and its offset not committed (with mid_batch).",
    )


class Rebalance(_Fault):
    """A member joins or leaves: partitions are revoked and reassigned."""

    kind: Literal["rebalance"]
    group: GroupName = "agent"
    pause_seconds: float = Field(5, ge=0, le=3600)


class RollingRestart(_Fault):
    """A rolling deploy: from ``at_seconds`` the group's instances are restarted one after another,
    ``interval_seconds`` apart, each down ``down_seconds``. A restarted instance shuts down
    gracefully (finishes its batches, leaves the group: a rebalance at once) and joins again when
    it is back (another rebalance)."""

    kind: Literal["rolling_restart"]
    group: GroupName = "agent"
    down_seconds: float = Field(10, ge=0, le=3600)
    interval_seconds: float = Field(30, gt=0, le=3600)


class MemberPause(_Fault):
    """One live member of a group stops sending heartbeats for ``duration_seconds`` (a
    stop-the-world garbage collection or a network blip) and then carries on where it was. When
    the pause outlasts ``session_timeout_ms`` the coordinator evicts the healthy member: its
    partitions are rebalanced away, its uncommitted work is redelivered, and it rejoins (another
    rebalance) when the pause ends."""

    kind: Literal["member_pause"]
    group: GroupName = "agent"
    member: int = Field(0, ge=0, le=1023, description="Which member (0 = the first) pauses.")
    duration_seconds: float = Field(10, gt=0, le=3600)


class StateFailover(_Fault):
    """The state store's primary is lost; writes fail until the design's failover completes."""

    kind: Literal["state_failover"]


class ProviderOutage(_Fault):
    """A model provider answers nothing but errors for ``duration_seconds``."""

    kind: Literal["provider_outage"]
    provider: Literal["primary", "fallback"] = "primary"
    duration_seconds: float = Field(600, gt=0, le=MAX_DURATION_SECONDS)
    failure_seconds: float = Field(
        1.0,
        ge=0,
        le=600,
        description="How long a call to the failed provider takes to come back with its error; "
        "a fallback tried after the error starts that much later (an open breaker skips it).",
    )
    hang_until_end: bool = Field(
        False,
        description="Calls to the failed provider hang until the outage ends and then all fail "
        "at once (a load balancer that held their connections resets them as the provider comes "
        "back), instead of each failing failure_seconds after it was made.",
    )


class BrokerLoss(_Fault):
    """Brokers of the event log are lost for ``duration_seconds`` (unflushed writes may vanish)."""

    kind: Literal["broker_loss"]
    brokers: int = Field(1, ge=1, le=64)
    duration_seconds: float = Field(300, gt=0, le=MAX_DURATION_SECONDS)
    follower_lag_ms: float = Field(
        500,
        ge=0,
        le=600_000,
        description="How far followers trail their leader (Kafka's replica.fetch.wait.max.ms, "
        "500 ms): writes a lost leader acknowledged alone in that window are gone (acks 0 or 1).",
    )
    unflushed_ms: float = Field(
        30_000,
        ge=0,
        le=3_600_000,
        description="Writes a lost broker held only in its page cache (Kafka leaves flushing to "
        "the OS; Linux writes dirty pages back after about 30 s): gone when no other replica "
        "has them.",
    )


class FollowerLag(_Fault):
    """The followers of the partitions brokers ``0..brokers-1`` lead stop keeping up for
    ``duration_seconds`` (the network between those brokers and the rest saturates, or their
    followers' fetches stall): they fetch nothing while it lasts and catch up at once after.

    A follower still behind after ``replica_lag_time_max_ms`` leaves the partition's ISR, leaving
    the leader alone in sync; until then ``acks=all`` writes wait for it. What the design does
    with an ISR of one (``min_insync_replicas``) and what a broker loss meanwhile takes:
    :mod:`simulator.faults.broker`.
    """

    kind: Literal["follower_lag"]
    brokers: int = Field(
        1, ge=1, le=64, description="The followers of the partitions brokers 0..n-1 lead lag."
    )
    duration_seconds: float = Field(300, gt=0, le=MAX_DURATION_SECONDS)
    replica_lag_time_max_ms: float = Field(
        30_000,
        ge=0,
        le=3_600_000,
        description="How long a follower may stay behind before its leader drops it from the "
        "ISR (Kafka's replica.lag.time.max.ms, 30,000 ms since Kafka 2.5).",
    )


class Poison(_Fault):
    """A fraction of events fail on every attempt (a schema or validation failure)."""

    kind: Literal["poison"]
    rate: float = Field(0.0001, gt=0, le=1, description="Fraction of events that are poison.")
    group: GroupName = "agent"


class Flaky(_Fault):
    """A fraction of events fail with an unclassified error that clears after a short time.

    A timeout or a generic 5xx from a tool or the model looks like a poison event at its first
    failure, but the attempt that comes after it has cleared goes through. Such failures count
    toward ``failures.retry.max_attempts`` (the consumer cannot tell them from permanent ones)
    and are retried with the group's backoff. Each flaky event's failure lasts a duration drawn
    uniformly from ``[clears_after_min_seconds, clears_after_max_seconds]``, counted from its
    first attempt.
    """

    kind: Literal["flaky"]
    rate: float = Field(0.01, gt=0, le=1, description="Fraction of events that are flaky.")
    group: GroupName = "agent"
    clears_after_min_seconds: float = Field(
        0.2,
        ge=0,
        le=3600,
        description="Shortest time a flaky event's failure lasts after its first attempt.",
    )
    clears_after_max_seconds: float = Field(
        1.0,
        ge=0,
        le=3600,
        description="Longest time a flaky event's failure lasts after its first attempt.",
    )

    @model_validator(mode="after")
    def _ordered(self) -> Flaky:
        if self.clears_after_max_seconds < self.clears_after_min_seconds:
            raise ValueError(
                f"clears_after_max_seconds ({self.clears_after_max_seconds:g}) is below "
                f"clears_after_min_seconds ({self.clears_after_min_seconds:g})"
            )
        return self


class ConsumerPause(_Fault):
    """A consumer group stops for ``duration_seconds`` (hours, typically), then replays."""

    kind: Literal["consumer_pause"]
    group: GroupName = "agent"
    duration_seconds: float = Field(48 * 3600, gt=0, le=30 * 24 * 3600)
    mid_batch: bool = Field(
        False, description="Stop in the middle of fetched batches (else each batch is finished)."
    )
    offsets_retention_hours: float = Field(
        24,
        gt=0,
        le=24 * 365,
        description="How long the brokers keep the committed offsets of a group with no members "
        "(Kafka's offsets.retention.minutes: 1 day before Kafka 2.0, 7 days since). A longer "
        "pause finds them gone and auto.offset.reset decides where the group starts.",
    )
    operator_response_seconds: float = Field(
        900,
        ge=0,
        le=7 * 24 * 3600,
        description="With auto.offset.reset=none the consumer raises; an operator, alerted, resets "
        "the group to the earliest offset this long after it returns.",
    )
    operator_reset: Literal["earliest"] | None = Field(
        None,
        description="earliest: an operator resets the group's offsets to the earliest the log "
        "holds while it is stopped (kafka-consumer-groups --reset-offsets --to-earliest), a "
        "deliberate replay, and it restarts there whatever its committed offsets and "
        "auto.offset.reset; None: it restarts from its committed offsets if the brokers still "
        "hold them, else auto.offset.reset decides.",
    )


class SagaFailure(_Fault):
    """Side-effecting tool steps, grouped in sagas, fail independently; failed sagas compensate.

    Each run carries ``sagas_per_run`` sagas of ``steps`` side-effecting tool calls (its first
    tool calls). Step ``k`` succeeds with ``step_success``; a failure at step ``k`` runs the
    design's compensations for the ``k - 1`` completed steps. A compensation attempt succeeds with
    ``compensation_success``; a failed attempt is a timeout whose effect still landed with
    ``applied_on_failure``, so its retry repeats the effect unless it carries its own key. A
    forward step whose effect landed times out with ``forward_timeout_share`` and the tool worker
    retries it: the retry repeats the effect unless the call carries the event's idempotency key.
    """

    kind: Literal["saga_failure"]
    steps: int = Field(3, ge=1, le=20)
    step_success: float = Field(0.98, ge=0, le=1)
    sagas_per_run: float = Field(1.0, ge=0, le=100)
    compensation_success: float = Field(0.9, ge=0, le=1)
    applied_on_failure: float = Field(0.5, ge=0, le=1)
    compensation_impossible_share: float = Field(
        0.0,
        ge=0,
        le=1,
        description="Share of compensations the receiver can never accept (the hold was already "
        "captured): every attempt fails, and the saga is stuck.",
    )
    approval_never_share: float = Field(
        0.0,
        ge=0,
        le=1,
        description="Share of sagas waiting for a human approval that never comes: held for ever "
        "unless the design's approval_deadline_hours expires them.",
    )
    forward_timeout_share: float = Field(
        0.0,
        ge=0,
        le=1,
        description="Share of completed forward steps whose call timed out after its effect "
        "landed: the tool worker retries the call, and the retry repeats the effect unless it "
        "carries the event's idempotency key (tools.side_effect_idempotency_key with keys from "
        "the event id).",
    )


Fault = Annotated[
    WorkerCrash
    | Rebalance
    | RollingRestart
    | MemberPause
    | StateFailover
    | ProviderOutage
    | BrokerLoss
    | FollowerLag
    | Poison
    | Flaky
    | ConsumerPause
    | SagaFailure,
    Field(discriminator="kind"),
]


class Scenario(_Part):
    """A scenario (contract 2, ``version: 1``)."""

    version: Literal[1] = 1
    name: str = Field(min_length=1, max_length=64)
    description: str = Field("", max_length=2000)
    duration_seconds: float = Field(900, gt=0, le=MAX_DURATION_SECONDS)
    deterministic: bool = Field(
        False, description="Evenly spaced arrivals and constant step times (closed-form checks)."
    )
    seed: int = Field(1, ge=0, le=2**63 - 1)
    load: Load = Field(default_factory=Load)
    faults: list[Fault] = Field(default_factory=list, max_length=64)

    @field_validator("faults")
    @classmethod
    def _faults_start_inside(cls, faults: list[Fault], info: ValidationInfo) -> list[Fault]:
        """Every fault starts in [0, duration_seconds): one timed at or after the end would never
        happen, and a check about it would pass without being exercised. Each such fault is an
        error at its own ``faults.N.at_seconds`` (so the file's line is named)."""
        duration = info.data.get("duration_seconds")
        if duration is None:
            return faults
        late = [
            InitErrorDetails(
                type=PydanticCustomError(
                    "fault_after_end",
                    "the {kind} fault starts at {at} s, at or after the end of the scenario "
                    "(duration_seconds: {duration} s), so it would never happen; start it "
                    "earlier or lengthen the scenario",
                    {
                        "kind": fault.kind,
                        "at": f"{fault.at_seconds:g}",
                        "duration": f"{duration:g}",
                    },
                ),
                loc=(i, "at_seconds"),
                input=fault.at_seconds,
            )
            for i, fault in enumerate(faults)
            if fault.at_seconds >= duration
        ]
        if late:
            raise ValidationError.from_exception_data(cls.__name__, late)
        return faults
