"""The design file (contract 1): everything a learner decides, one section per concern.

A design is YAML with ``version: 1``. Field names use the field's own terms (Kafka consumer and
producer settings, idempotency keys, outbox, saga, dead-letter queue) and carry their unit in the
name. Defaults are what a learner starts from: a plausible but not yet durable system (Kafka's
own defaults where Kafka has one, for example ``enable_auto_commit: true`` and
``auto_offset_reset: latest``), so the course has something to improve.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from simulator.groups import GroupName


class _Section(BaseModel):
    """Base of every design section: unknown fields are errors; assignments are validated."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, defer_build=True)


class OutcomeDelivery(StrEnum):
    """How a client learns a run's outcome."""

    polling = "polling"
    stream = "stream"
    webhook = "webhook"


class IdempotencyKeySource(StrEnum):
    """Who makes the Idempotency-Key and when."""

    client = "client"
    server_per_attempt = "server_per_attempt"


class ApiSection(_Section):
    """The run API: start a run asynchronously and learn its outcome."""

    start_status_code: Literal[200, 201, 202] = Field(
        200, description="HTTP status returned by POST /runs; 202 Accepted with a run id is async."
    )
    idempotency_key_required: bool = Field(
        False, description="Reject a start request without an Idempotency-Key header."
    )
    idempotency_key_source: IdempotencyKeySource = Field(
        IdempotencyKeySource.server_per_attempt,
        description="client: the caller sends one key for all retries; server_per_attempt: a new "
        "key on every attempt, so retries are not recognised.",
    )
    missing_key_status: Literal[400, 422, 200] = Field(
        200, description="Status when the key is missing (400 when required)."
    )
    key_reuse_different_payload_status: Literal[409, 422, 200] = Field(
        200, description="Status when a key is reused with a different payload (422)."
    )
    key_in_progress_status: Literal[409, 425, 200] = Field(
        200,
        description="Status when the same key arrives while the first request still runs (409).",
    )
    idempotency_key_retention_hours: float = Field(
        24,
        ge=0,
        le=24 * 365,
        description="How long the API remembers a key and its saved response.",
    )
    outcome_delivery: OutcomeDelivery = OutcomeDelivery.polling


class DataModelSection(_Section):
    """Tables behind the workflow and how they relate to the event log."""

    append_only_event_log: bool = Field(
        False,
        description="Every change of a run is appended as an event; nothing is updated in place.",
    )
    dedupe_table_unique_key: bool = Field(
        False, description="processed_events has a unique constraint on the event id."
    )
    outbox: bool = Field(
        False,
        description="State change and outgoing event are written in one local transaction; a relay "
        "publishes the outbox rows.",
    )
    outbox_relay_poll_interval_ms: float = Field(500, gt=0, le=600_000)
    checkpoints_table: bool = Field(False, description="A table of per-run checkpoints exists.")
    state_rebuildable_from_log: bool = Field(
        False, description="State is a projection of the event log and can be rebuilt by replay."
    )


class PartitionKey(StrEnum):
    """Which field becomes the Kafka record key (key -> partition by a stable hash)."""

    run_id = "run_id"
    task_id = "task_id"
    tenant_id = "tenant_id"
    event_id = "event_id"
    arrival_timestamp = "arrival_timestamp"


class Acks(StrEnum):
    """Producer acks: how many replicas must have a write before it is acknowledged."""

    none = "0"
    leader = "1"
    all = "all"


class AutoOffsetReset(StrEnum):
    """What a consumer does when its committed offset no longer exists (Kafka auto.offset.reset)."""

    earliest = "earliest"
    latest = "latest"
    none = "none"


class EventLogSection(_Section):
    """The durable, partitioned event log (a Kafka-style topic per consumer group)."""

    partitions: int = Field(12, ge=1, le=4096, description="Partitions per topic.")
    partition_key: PartitionKey = PartitionKey.tenant_id
    key_salt_buckets: int = Field(
        1, ge=1, le=64, description="Salt a hot aggregate's key into this many sub-keys (1 = none)."
    )
    brokers: int = Field(3, ge=1, le=64)
    replication_factor: int = Field(1, ge=1, le=9)
    min_insync_replicas: int = Field(1, ge=1, le=9)
    acks: Acks = Acks.leader
    enable_idempotence: bool = Field(False, description="Idempotent producer (needs acks=all).")
    retention_hours: float = Field(
        168, gt=0, le=24 * 365, description="Kafka default log retention."
    )
    auto_offset_reset: AutoOffsetReset = AutoOffsetReset.latest

    @model_validator(mode="after")
    def _settings_agree(self) -> EventLogSection:
        """Refuse settings Kafka itself refuses, each error located at its field (so a file
        error names its line and a form error sits beside its input): see
        :func:`event_log_conflicts`. Runs on validation and on every assignment."""
        conflicts = event_log_conflicts(self)
        if conflicts:
            raise ValidationError.from_exception_data(
                type(self).__name__,
                [
                    InitErrorDetails(
                        type=PydanticCustomError("value_error", message),
                        loc=(name,),
                        input=getattr(self, name),
                    )
                    for name, message in conflicts
                ],
            )
        return self


def event_log_conflicts(log: EventLogSection) -> list[tuple[str, str]]:
    """The event log's settings that contradict each other, as ``(field, message)`` pairs.

    - ``replication_factor`` above ``brokers``: each replica of a partition needs its own broker,
      so Kafka refuses to create the topic (InvalidReplicationFactorException).
    - ``min_insync_replicas`` above ``replication_factor``: no acks=all write could ever be
      acknowledged (every one would fail with NotEnoughReplicas).
    - ``enable_idempotence`` with ``acks`` other than ``all``: Kafka's producer refuses to start
      (ConfigException "Must set acks to all in order to use the idempotent producer.
      Otherwise we cannot guarantee idempotence."): a write the leader alone acknowledged can
      vanish with it, so the broker's sequence numbers cannot tell a retry from a new event.
    """
    out: list[tuple[str, str]] = []
    if log.replication_factor > log.brokers:
        out.append(
            (
                "replication_factor",
                f"replication_factor {log.replication_factor} exceeds the {log.brokers} brokers: "
                "each replica of a partition needs its own broker, so Kafka refuses to create "
                "the topic",
            )
        )
    if log.min_insync_replicas > log.replication_factor:
        out.append(
            (
                "min_insync_replicas",
                f"min_insync_replicas {log.min_insync_replicas} exceeds replication_factor "
                f"{log.replication_factor}: no write with acks=all could ever be acknowledged",
            )
        )
    if log.enable_idempotence and log.acks is not Acks.all:
        out.append(
            (
                "enable_idempotence",
                f"the idempotent producer needs acks all, not {log.acks.value}: Kafka's producer "
                'refuses to start ("Must set acks to all in order to use the idempotent '
                'producer"); set acks to all or turn enable_idempotence off',
            )
        )
    return out


class CommitMode(StrEnum):
    """When a consumer commits its offset relative to the work: after each batch is processed,
    when a batch is fetched, every auto-commit interval, or stored in the same database
    transaction as each step's effect (so an effect and its offset are never apart: seed 000)."""

    after_processing = "after_processing"
    before_processing = "before_processing"
    auto = "auto"
    in_effect_transaction = "in_effect_transaction"


class Dedupe(StrEnum):
    """Where processed event ids are remembered."""

    none = "none"
    in_memory = "in_memory"
    durable_same_transaction = "durable_same_transaction"


class DedupeAt(StrEnum):
    """Where a redelivered step is recognised by the dedupe record: before it does any work (its
    model call included), or only when its effect is written (the model is called again, and
    paid, unless a cached or recorded answer serves it)."""

    before_model_call = "before_model_call"
    at_effect = "at_effect"


class IdempotencyKeyFrom(StrEnum):
    """What a side effect's idempotency key is derived from."""

    event_id = "event_id"
    random_per_attempt = "random_per_attempt"


class DeliverySection(_Section):
    """Delivery semantics: commit order, dedupe, idempotency keys."""

    commit: CommitMode = CommitMode.auto
    auto_commit_interval_ms: float = Field(5000, gt=0, le=3_600_000)
    dedupe: Dedupe = Dedupe.none
    dedupe_at: DedupeAt = Field(
        DedupeAt.before_model_call,
        description="Where a redelivered step is recognised: before its model call, or at its "
        "effect (after paying for the call again).",
    )
    idempotency_key_from: IdempotencyKeyFrom = IdempotencyKeyFrom.random_per_attempt
    dedupe_key_retention_hours: float = Field(
        24, ge=0, le=24 * 365, description="How long a processed event id is kept."
    )

    @property
    def enable_auto_commit(self) -> bool:
        """Kafka's enable.auto.commit, derived from the commit mode."""
        return self.commit is CommitMode.auto


SESSION_TIMEOUT_MIN_MS = 6_000
"""Kafka's broker default ``group.min.session.timeout.ms``: a member asking for less is refused
(``INVALID_SESSION_TIMEOUT``) when it joins."""
SESSION_TIMEOUT_MAX_MS = 1_800_000
"""Kafka's broker default ``group.max.session.timeout.ms`` (30 min): the upper bound it enforces."""


class AssignmentStrategy(StrEnum):
    """Kafka partition assignment strategies."""

    range = "range"
    round_robin = "round_robin"
    cooperative_sticky = "cooperative_sticky"


class ConsumerGroup(_Section):
    """One consumer group: instances, their concurrency and their poll/commit settings."""

    instances: int = Field(2, ge=0, le=1024)
    concurrency_per_instance: int = Field(
        4, ge=1, le=1024, description="Partitions an instance works on at once."
    )
    max_poll_records: int = Field(500, ge=1, le=10_000, description="Kafka default 500.")
    max_poll_interval_ms: float = Field(300_000, gt=0, le=86_400_000, description="Kafka default.")
    session_timeout_ms: float = Field(
        45_000,
        ge=SESSION_TIMEOUT_MIN_MS,
        le=SESSION_TIMEOUT_MAX_MS,
        description="Kafka default 45 s; the broker refuses a value outside "
        "group.min.session.timeout.ms (6 s) to group.max.session.timeout.ms (30 min).",
    )
    assignment: AssignmentStrategy = AssignmentStrategy.range


def _group(instances: int, concurrency: int) -> ConsumerGroup:
    return ConsumerGroup(instances=instances, concurrency_per_instance=concurrency)


class ConsumersSection(_Section):
    """The three consumer groups: agent steps, tool calls and state writes."""

    agent: ConsumerGroup = Field(default_factory=lambda: _group(2, 4))
    tool: ConsumerGroup = Field(default_factory=lambda: _group(2, 4))
    state: ConsumerGroup = Field(default_factory=lambda: _group(1, 4))

    def by_name(self, name: GroupName) -> ConsumerGroup:
        """The consumer group called ``name`` (one of :data:`simulator.groups.GROUPS`)."""
        group: ConsumerGroup = getattr(self, name)
        return group


class ModelProvider(_Section):
    """A model provider's capacity as bought: RPM, TPM and a concurrency limit."""

    name: str = Field("primary", min_length=1, max_length=64)
    model_version: str = Field("model-2025-06", min_length=1, max_length=64)
    rpm: int = Field(600, ge=1, le=10_000_000, description="Requests per minute.")
    tpm: int = Field(1_000_000, ge=1, le=10_000_000_000, description="Tokens per minute.")
    max_concurrency: int = Field(32, ge=1, le=100_000, description="Requests in flight at once.")


class FallbackProvider(ModelProvider):
    """A second provider used while the circuit breaker holds the primary open."""

    enabled: bool = False


def _fallback() -> FallbackProvider:
    return FallbackProvider(name="fallback", model_version="fallback-2025-06")


class CacheKey(StrEnum):
    """What a model response is addressed by in the response cache."""

    prompt_hash_and_model_version = "prompt_hash_and_model_version"
    prompt_hash = "prompt_hash"


class ResponseCache(_Section):
    """Model response cache: a replayed step finds its paid answer here."""

    enabled: bool = False
    key: CacheKey = CacheKey.prompt_hash_and_model_version
    ttl_hours: float = Field(24, gt=0, le=24 * 365)


class CircuitBreaker(_Section):
    """Opens after consecutive failures; while open, calls go to the fallback or wait."""

    enabled: bool = False
    failure_threshold: int = Field(5, ge=1, le=1000)
    open_seconds: float = Field(30, gt=0, le=3600)


class Jitter(StrEnum):
    """Randomisation of retry backoff (AWS Architecture Blog, 'Exponential Backoff And Jitter')."""

    none = "none"
    full = "full"
    equal = "equal"


class RetryPolicy(_Section):
    """Retry with exponential backoff: wait base * 2**(attempt-1), capped, with jitter."""

    max_attempts: int | None = Field(
        3, ge=1, le=100, description="Attempts in all, first included; null means no limit."
    )
    base_backoff_seconds: float = Field(1.0, ge=0, le=3600)
    max_backoff_seconds: float = Field(30.0, ge=0, le=86_400)
    jitter: Jitter = Jitter.none


class ModelSection(_Section):
    """Model capacity and resilience."""

    primary: ModelProvider = Field(default_factory=ModelProvider)
    fallback: FallbackProvider = Field(default_factory=_fallback)
    cache: ResponseCache = Field(default_factory=ResponseCache)
    circuit_breaker: CircuitBreaker = Field(default_factory=CircuitBreaker)
    retry: RetryPolicy = Field(default_factory=RetryPolicy)


class OrchestrationPattern(StrEnum):
    """How agents coordinate."""

    orchestrator_worker = "orchestrator_worker"
    peer_agents = "peer_agents"
    single_agent = "single_agent"


class OrchestrationSection(_Section):
    """Who decides the fan-out and how far it may go."""

    pattern: OrchestrationPattern = OrchestrationPattern.peer_agents
    max_subagents: int | None = Field(
        None, ge=1, le=1000, description="Cap on researcher subagents per run; null = no cap."
    )
    token_budget_per_run: int | None = Field(
        None,
        ge=1,
        le=100_000_000,
        description="Tokens a run may spend before it stops; null = none.",
    )
    workflow_id_is_business_id: bool = Field(
        False, description="The workflow id is the run's business id, so a repeat start is a no-op."
    )


class CheckpointGranularity(StrEnum):
    """How often a run's progress is made durable."""

    per_step = "per_step"
    per_agent = "per_agent"
    per_run = "per_run"


class CheckpointSection(_Section):
    """Checkpoints decide how much work a crash makes the run redo."""

    granularity: CheckpointGranularity = CheckpointGranularity.per_run
    reuse_recorded_results: bool = Field(
        False, description="On resume, a recorded model/tool result is reused instead of re-called."
    )


class Replication(StrEnum):
    """State-store replication mode."""

    sync = "sync"
    async_ = "async"


class FailoverMode(StrEnum):
    """How a replica is promoted when the primary is lost."""

    automatic = "automatic"
    manual = "manual"


MANUAL_FAILOVER_MIN_S = 300.0
"""The least time a failover by hand takes, seconds: the on-call engineer is paged, acknowledges
and promotes the replica. Five minutes is a common acknowledgement target for a page; a night
call takes longer (the course's narrative says about ten minutes). An assumption of the course,
not a measured figure."""


class StateStoreSection(_Section):
    """The state database: capacity, replicas, replication and failover."""

    write_capacity_per_second: float = Field(1000, ge=1, le=10_000_000)
    write_latency_ms: float = Field(10, gt=0, le=60_000)
    replicas: int = Field(0, ge=0, le=9)
    replication: Replication = Replication.async_
    replication_lag_ms: float = Field(1000, ge=0, le=3_600_000)
    failover: FailoverMode = FailoverMode.manual
    failover_seconds: float = Field(
        600,
        gt=0,
        le=86_400,
        description="Time to promote a replica (automatic ~30-40 s; by hand at least "
        "MANUAL_FAILOVER_MIN_S, the time to page someone).",
    )

    @property
    def promote_seconds(self) -> float:
        """Seconds from the primary's loss until a replica takes writes: ``failover_seconds``,
        and by hand never less than :data:`MANUAL_FAILOVER_MIN_S` (someone must be paged,
        answer and act before any promotion starts)."""
        if self.failover is FailoverMode.manual:
            return max(self.failover_seconds, MANUAL_FAILOVER_MIN_S)
        return self.failover_seconds


class CompensationOrder(StrEnum):
    """Order in which a saga's compensations run."""

    reverse = "reverse"
    forward = "forward"
    none = "none"


class SagaSection(_Section):
    """A saga over side-effecting tool steps."""

    enabled: bool = False
    compensation_order: CompensationOrder = CompensationOrder.none
    compensation_idempotency_key: bool = False
    irreversible_steps_last: bool = False
    max_compensation_attempts: int = Field(3, ge=1, le=100)
    escalate_to_human_queue: bool = False
    approval_deadline_hours: float | None = Field(
        None,
        gt=0,
        le=24 * 365,
        description="A human approval the saga waits for expires after this long: the saga emits "
        "an expiry event and compensates what it holds. null = it waits forever.",
    )


class ToolsSection(_Section):
    """The tool-runner fleet and how its side effects are made safe."""

    runners: int = Field(4, ge=0, le=10_000)
    concurrency_per_runner: int = Field(4, ge=1, le=1024)
    side_effect_idempotency_key: bool = False
    saga: SagaSection = Field(default_factory=SagaSection)


class DeadLetterQueue(_Section):
    """Where events that keep failing are parked."""

    enabled: bool = False
    retention_hours: float = Field(336, gt=0, le=24 * 365)
    alert_on_depth: bool = False


class FailuresSection(_Section):
    """Retries, dead letters and per-key quarantine for events that fail."""

    retry: RetryPolicy = Field(default_factory=lambda: RetryPolicy(max_attempts=None))
    dead_letter_queue: DeadLetterQueue = Field(default_factory=DeadLetterQueue)
    quarantine_per_key: bool = False


class Design(_Section):
    """A learner's whole design (contract 1, ``version: 1``).

    Raises ``pydantic.ValidationError`` on a bad field; use ``simulator.files.load_design`` to get
    errors that name the file and line.
    """

    version: Literal[1] = 1
    name: str = Field("my design", max_length=120)
    api: ApiSection = Field(default_factory=ApiSection)
    data_model: DataModelSection = Field(default_factory=DataModelSection)
    event_log: EventLogSection = Field(default_factory=EventLogSection)
    delivery: DeliverySection = Field(default_factory=DeliverySection)
    consumers: ConsumersSection = Field(default_factory=ConsumersSection)
    model: ModelSection = Field(default_factory=ModelSection)
    orchestration: OrchestrationSection = Field(default_factory=OrchestrationSection)
    checkpoint: CheckpointSection = Field(default_factory=CheckpointSection)
    state_store: StateStoreSection = Field(default_factory=StateStoreSection)
    tools: ToolsSection = Field(default_factory=ToolsSection)
    failures: FailuresSection = Field(default_factory=FailuresSection)
