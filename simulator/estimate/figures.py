"""The estimate's figures: per consumer group, for the model provider, and for the whole design.

Rates are step events per second (``_eps``), times seconds (``_s``); a wait or drain time of
``None`` means it never ends (the queue is saturated).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from simulator.capacity import LimitingFactor
from simulator.fan_out import RunFanOut
from simulator.groups import GroupName
from simulator.poison import PoisonStall


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid", ser_json_inf_nan="null")


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
    """The closed-form estimate of a design under a scenario (see
    :func:`simulator.estimate.estimate`)."""

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
