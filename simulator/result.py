"""What a simulation returns: metrics, cost and time series (part of contract 3).

Counts are step events unless the name says otherwise; times are seconds; rates are step events
per second (``_eps``); money is US dollars per month (``_usd``).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


class GroupMetrics(_Out):
    """One consumer group's figures."""

    arrivals: int
    processed: int
    capacity_eps: float
    utilisation: float
    lag_total_max: int
    limits_utilisation: dict[str, float] = Field(
        default_factory=dict,
        description="The group's offered load over each of its capacity ceilings (partitions, "
        "instances x concurrency, provider concurrency, RPM, TPM, tool runners, state write "
        "capacity) with the measured step time: which ceiling is near, by name.",
    )
    rebalance_paused_partition_s: float = Field(
        0.0,
        description="Partition-seconds rebalances held partitions from work: each revoked "
        "partition from its revocation (its batch finished) until the new assignment resumed it.",
    )
    poll_records_max: int = Field(
        0,
        description="Most records one partition fetched in one poll: the instance's "
        "max.poll.records shared by the partitions it works at once, or fewer when fewer had "
        "arrived (a backlog fills the poll, normal traffic rarely does).",
    )
    poll_batch_max_s: float = Field(
        0.0,
        description="Longest a partition's batch ran, seconds: from its poll to the end of its "
        "last record (waits at the model gateway and retries included), or to the crash or kick "
        "that cut it short. A batch over max.poll.interval.ms gets its member kicked.",
    )
    backlog_peak: int = Field(
        0,
        description="Largest backlog of the group above its normal band (mean + 3 standard "
        "deviations before the first fault), step events: events "
        "due and not started (for causal runs due by the run's graph whether produced or not).",
    )
    busy_partitions_max: int
    instances_alive_min: int
    mean_step_s: float = Field(0.0, description="Measured mean step time of processed events.")
    latency_mean_s: float = Field(0.0, description="Mean arrival-to-completion time, seconds.")
    latency_p95_s: float = Field(
        0.0, description="p95 latency, events still waiting at the end counted with their wait."
    )
    latency_censored: int = Field(
        0, description="Events still waiting at the end (their latency is a lower bound)."
    )
    wait_mean_s: float = Field(0.0, description="Mean arrival-to-start time (queueing), seconds.")


class Metrics(_Out):
    """The simulator's figures (the top-level keys of ``metrics`` in the result JSON)."""

    arrivals: int = Field(
        description="Step events produced to the log (with an outbox: written to the outbox; "
        "one its relay had not published by the end of the window is counted, not processed)."
    )
    processed: int = Field(description="Step events whose processing completed (first time).")
    throughput_eps: float
    capacity_eps: float = Field(
        description="Busy-able partitions / mean step time, bottleneck group."
    )
    utilisation: float = Field(description="Offered load / capacity of the bottleneck group (0..).")
    lag_total_max: int = Field(description="Largest total consumer lag seen, in step events.")
    backlog_peak: int = Field(
        description="Largest total backlog above its normal band (the mean before the first fault "
        "plus 3 standard deviations), sampled, step events summed over the groups: events due "
        "and not yet started (arrived in the log; for causal runs, due by the run's graph whether "
        "or not a stalled run produced them). After a worker "
        "crash under a steady load: the backlog at the restart plus what comes due while the "
        "restarted workers rejoin (a rebalance) and start again."
    )
    orphaned_partitions_s: float | None = Field(
        None,
        description="After a crash of some of a group's members: the longest their partitions "
        "had no one working them, seconds (until session.timeout.ms let the survivors take them, "
        "or the members came back); None when every crash took all members.",
    )
    backlog_at_restart: int | None = Field(
        None,
        description="Events of the crashed group that came due while its crashed workers were "
        "down and that no survivor started: the backlog's growth from the crash to the restart "
        "(rate x outage for a steady load), the largest over the crashes; None when no crashed "
        "worker came back in the window.",
    )
    drain_seconds: float | None = Field(
        description="Seconds from the end of the last fault until the events waiting in the log "
        "(arrived, not started) are back to their normal level: the queues have emptied (runs a "
        "fault delayed may still be finishing their remaining steps)."
    )
    drain_note: str | None = None
    latency_p50_s: float = Field(
        description="Arrival-to-completion percentiles, seconds, over every finished event and "
        "every event still waiting at the end, counted with its wait so far (a lower bound)."
    )
    latency_p95_s: float
    latency_p99_s: float
    latency_censored: int = Field(
        0,
        description="Step events still waiting at the end of the window (arrived, neither "
        "finished nor given up): when above 0 the latency percentiles are lower bounds.",
    )
    in_flight_mean: float = 0.0
    publish_delay_mean_s: float = Field(
        0.0,
        description="Mean seconds from an event's write (its outbox row) to its arrival in the "
        "log: the outbox relay's poll, and for causal runs the producer's tick.",
    )
    run_latency_p50_s: float | None = Field(
        None,
        description="Median time from a run's request to its report, seconds, counting runs still "
        "unfinished at the end at their age then (censored); None when the scenario drives step "
        "events, not runs.",
    )
    run_latency_p95_s: float | None = None
    run_latency_p99_s: float | None = None
    run_critical_path_s: float | None = Field(
        None,
        description="Median over the runs of their critical path: the latency a run would have "
        "if nothing queued (planner, longest researcher, writer, reviewer; each hop's mean "
        "publish delay included), seconds.",
    )
    run_work_path_s: float | None = Field(
        None,
        description="Median over the runs of their longest chain of steps, step times only (no "
        "queueing, no publish delay): what a run must wait for however large the system, seconds.",
    )
    tokens_per_run: float | None = Field(
        None,
        description="Mean tokens of the model calls of a completed run (input + output).",
    )
    model_calls_per_run: float | None = Field(
        None,
        description="Mean model calls of a completed run: the planned fan-out's, more when "
        "agents fan out past the plan, fewer when a token budget or a cap on peers stops the "
        "research.",
    )
    runs_completed: int | None = Field(
        None, description="Runs requested in the window whose report was applied by its end."
    )
    runs_stalled: int | None = Field(
        None,
        description="Runs requested in the window and unfinished at its end (a lost step stalls "
        "a run for good; a backlog only delays it).",
    )
    order_violations_run: int | None = Field(
        None,
        description="Step events applied before an earlier-written event of the same run in the "
        "same topic (first applies; per-key order kept by the log is what prevents them).",
    )
    order_violations_task: int | None = Field(
        None,
        description="Step events applied before an earlier-written event of the same agent task "
        "in the same topic.",
    )
    latency_mean_s: float = Field(0.0, description="Mean arrival-to-completion time, seconds.")
    wait_mean_s: float = Field(
        0.0,
        description="Mean time from arrival to the step's start (queueing, 429 waits), seconds.",
    )
    dedupe_skipped: int = Field(
        0, description="Redelivered events skipped because dedupe had seen them (no effect)."
    )
    dedupe_records_expired: int = Field(
        0,
        description="Redelivered events that had been applied but whose durable dedupe record "
        "had expired (older than dedupe_key_retention_hours): applied again.",
    )
    cache_hits: int = Field(
        0, description="Repeated agent steps answered by the response cache (no model call)."
    )
    redelivered: int = 0
    reprocessing_rate: float = Field(
        0.0,
        description="Redelivered records over all the records consumed (redelivered / (processed "
        "+ redelivered)), 0..1: beside a lag back to zero, a high rate says the group is doing "
        "its work again, whether dedupe then discards it or applies it twice (seed 001).",
    )
    publishes_lost: int | None = Field(
        None,
        description="Causal runs: steps whose next events were still unpublished at the end "
        "because their service died between the step's commit and the publish (no outbox: the "
        "dual write) and nothing ran them again; each stalls its run. None for an open-loop "
        "load.",
    )
    duplicate_effects: int = 0
    lost: int = 0
    log_lost: int = Field(
        0,
        description="Of lost: acknowledged events a broker loss took from the event log.",
    )
    offset_reset_skipped: int = Field(
        0,
        description="Of lost: unread events a consumer group skipped when its offset was reset "
        "(auto.offset.reset=latest, an operator's reset, or the oldest offset left after "
        "retention deleted events it had not read).",
    )
    dead_lettered: int = 0
    poison_stall_max_s: float | None = Field(
        None,
        description="With poison events: the longest a poison event held its partition before it "
        "was given up, seconds (to the end of the window when it never let go); None without.",
    )
    poison_still_holding: int | None = Field(
        None,
        description="With poison events: poison events still holding their partition at the end "
        "of the window (retried without a limit, or not yet at it): the longest hold is then "
        "at least poison_stall_max_s; None without poison.",
    )
    poison_given_up: int | None = Field(
        None,
        description="With poison events: poison events given up after the retry limit, parked "
        "on the dead-letter topic or dropped; None without poison.",
    )
    poison_dropped: int | None = Field(
        None,
        description="Of poison_given_up: dropped for want of a dead-letter topic (each also "
        "counted in lost: its effect never happens and nothing records why); None without.",
    )
    flaky_events: int | None = Field(
        None,
        description="With flaky events (an unclassified error that clears a short time after "
        "the event's first attempt): flaky events whose first attempt was made; None without.",
    )
    flaky_recovered: int | None = Field(
        None,
        description="Of flaky_events: went through on a retry made after their failure "
        "cleared; None without flaky events.",
    )
    flaky_given_up: int | None = Field(
        None,
        description="Of flaky_events: given up (parked on the dead-letter topic, or dropped) "
        "after every attempt failed, although a later retry would have gone through; None "
        "without flaky events.",
    )
    flaky_given_up_after_max_s: float | None = Field(
        None,
        description="The longest a given-up flaky event was retried, from its first attempt to "
        "being given up, seconds (0 for a single attempt); None when none was given up.",
    )
    flaky_clear_max_s: float | None = Field(
        None,
        description="The longest a met flaky event's failure lasted after its first attempt, "
        "seconds; None without flaky events met.",
    )
    order_violations: int = 0
    rebalances: int = 0
    members_kicked: int = Field(
        0,
        description="Members the group evicted because a batch outlasted max.poll.interval.ms "
        "(each a leave and a rejoin, its uncommitted batch redelivered).",
    )
    healthy_members_evicted: int | None = Field(
        None,
        description="With a member's pause in the scenario: healthy members evicted because the "
        "pause outlasted session.timeout.ms; None without one.",
    )
    model_calls: int = 0
    model_calls_repeated: int = 0
    tokens: int = 0
    tokens_repeated: int = 0
    http_429s: int = Field(
        0,
        description="Model calls refused with HTTP 429: only a call larger than a minute's TPM "
        "(the gateway meters the rest to the limits).",
    )
    model_wait_mean_s: float = Field(
        0.0,
        description="Mean time a model call waited for the provider, seconds: at the model "
        "gateway for a concurrency slot, plus its backoff after 429s (what the estimate's "
        "provider wait predicts).",
    )
    model_wait_without_relay_mean_s: float | None = Field(
        None,
        description="Mean seconds a model call waits at the model gateway without the outbox "
        "relay's bursts: model_wait_mean_s of the same run with a change-data-capture relay "
        "(simulator.simulate); this run's own wait without a slower relay or when no call "
        "waited; None in a scenario with faults.",
    )
    model_recovery_s: float | None = Field(
        None,
        description="Seconds from the end of the last provider outage until the last model call "
        "retried after an error or a 429 went through (the retries' recovery); None without a "
        "provider outage.",
    )
    wrong_model_version_served: int = 0
    fallback_calls: int = 0
    fallback_wait_mean_s: float | None = Field(
        None,
        description="Mean seconds a call the fallback provider started waited at the gateway "
        "for its limits (a concurrency slot, room in its RPM and TPM buckets): a fallback "
        "sized for the peak keeps it near 0; None when the fallback started no call.",
    )
    fallback_utilisation: float | None = Field(
        None,
        description="The model calls due per second (the agent group's offered load) over the "
        "fallback provider's smallest ceiling (concurrency over the measured step time, RPM, "
        "TPM): what it would carry with every call due sent to it, calls re-sent by kicked "
        "workers not counted; None when the fallback started no call.",
    )
    breaker_return_s: float | None = Field(
        None,
        description="After a provider outage: seconds the calls kept going to the fallback after "
        "the primary was back (until the breaker's trial call closed it); 0 without a breaker "
        "(every call tries the primary first); None without an outage.",
    )
    outage_calls_unanswered: int | None = Field(
        None,
        description="During provider outages: model calls no provider answered (no fallback, or "
        "the fallback down or full), each retried later; None without an outage.",
    )
    primary_failures: int = Field(
        0,
        description="Model calls sent to a failed primary provider, each waiting for its error "
        "(with a breaker: those before it opens and its trial calls; with neither breaker nor "
        "fallback: every call the primary refused while down).",
    )
    state_writes_lost: int = 0
    state_writes_rebuilt: int = 0
    state_writes_refused_s: float | None = Field(
        None,
        description="With a state-store failover: seconds from the first write the store refused "
        "to the last (the recovery time the writers met); None without one.",
    )
    write_retry_delay_s: float | None = Field(
        None,
        description="After a state-store failover: the mean seconds the waiting state writes "
        "started after the store came back (their retries' backoff); None without one.",
    )
    saga_compensations: int = 0
    sagas_to_human_queue: int = 0
    sagas_left_undone: int = Field(
        0,
        description="Sagas that failed part way and stay half done: no compensation, one that "
        "failed every attempt with no human queue, or an irreversible step before the failure.",
    )
    sagas_held_forever: int = Field(
        0, description="Sagas waiting for an approval that never comes, with no deadline."
    )
    compensations_repeated: int = Field(
        0, description="Compensation effects applied twice by a retry without its own key."
    )
    compensations_misapplied: int = Field(
        0, description="Compensations run out of order (forward), undoing a released step."
    )
    tool_retries_after_effect: int = Field(
        0,
        description="Saga scenarios: forward tool calls retried by their worker after a timeout "
        "whose effect had landed; each repeats the effect (counted in duplicate_effects) unless "
        "the call carries the event's idempotency key.",
    )
    producer_blocked_seconds: float = Field(
        0.0,
        description="Seconds during which some partition's producers waited: it refused writes "
        "(offline, or fewer in-sync replicas than min.insync.replicas), or its acks=all writes "
        "waited for followers about to leave the ISR.",
    )
    isr_shrunk_partitions: int = Field(
        0,
        description="Partitions of each topic whose followers fell behind past "
        "replica.lag.time.max.ms and left the ISR, leaving the leader alone in sync.",
    )
    checkpoint_writes: int = Field(
        0, description="State-store writes of checkpoints for the agent steps processed."
    )
    offset_reset_errors: int = Field(
        0,
        description="Partitions whose committed offset was gone and auto.offset.reset=none raised "
        "an error instead of skipping or replaying.",
    )
    by_group: dict[str, GroupMetrics] = Field(default_factory=dict)


class FaultWindow(_Out):
    """When a fault was active, for shading a chart."""

    kind: str
    start_s: float
    end_s: float


class Timeseries(_Out):
    """Sampled every ``interval_seconds``; every list has one value per sample time ``t_s``."""

    interval_seconds: float
    t_s: list[float]
    lag_total: list[int]
    lag_worst_partition: list[int]
    arrivals_eps: list[float]
    throughput_eps: list[float]
    in_flight: list[int]
    errors: list[int]
    partition_lag_max: list[int] = Field(
        default_factory=list, description="Per partition of the agent topic, the largest lag seen."
    )


class CostLine(_Out):
    """One component's monthly cost."""

    component: str
    monthly_usd: float
    detail: str


class Cost(_Out):
    """Monthly cost against the budget, in US dollars a month (``simulator.cost.monthly_cost``)."""

    monthly_usd: float
    budget_usd: float
    by_component: dict[str, float]
    lines: list[CostLine] = Field(default_factory=list)

    @property
    def over_budget(self) -> bool:
        """True when the month costs more than the budget."""
        return self.monthly_usd > self.budget_usd

    @property
    def budget_share(self) -> float:
        """Monthly cost as a fraction of the budget (0 without a budget)."""
        return self.monthly_usd / self.budget_usd if self.budget_usd else 0.0


class SimulationResult(_Out):
    """The result of ``simulator.simulate``; byte-identical JSON for the same inputs."""

    simulator_version: str
    scenario: str
    seed: int
    duration_seconds: float
    metrics: Metrics
    cost: Cost | None = None
    timeseries: Timeseries
    fault_windows: list[FaultWindow] = Field(default_factory=list)
    truncated: bool = Field(False, description="True when a bound on events or wall time cut it.")
    notes: list[str] = Field(default_factory=list)
