"""The backlog a scenario's fault leaves in a consumer group, and the capacity that drains it.

Rules (fluid approximation, mean rates; the worst fault per group is kept by the estimate):

- ``worker_crash`` of all instances stops the group; of some, their partitions stall until
  session.timeout.ms notices, then the survivors carry every partition. Redelivery per crashed
  instance: commit after processing redelivers at most one batch (max.poll.records), losing
  nothing; commit before processing loses up to a batch; auto-commit may redeliver a batch plus
  one interval's work and lose up to a batch.
- ``consumer_pause`` stops the group for its duration.
- ``provider_outage`` of the primary stops the agent group unless a fallback with a circuit
  breaker carries it at the fallback's limits (not while the fallback is down too).
- ``state_failover`` stops the state group for the design's failover time.
- ``rebalance`` pauses every partition (eager: range, round robin) or only the partitions of the
  member that leaves (cooperative sticky) for ``pause_seconds``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from simulator.capacity import capacity_limits, smallest_limit
from simulator.closed_forms.batches import redelivered_bound
from simulator.closed_forms.drain import backlog_after_outage
from simulator.design import AssignmentStrategy, CommitMode, ConsumerGroup, Design
from simulator.groups import GroupName
from simulator.scenario import ConsumerPause, ProviderOutage, Rebalance, StateFailover, WorkerCrash


@dataclass
class Outage:
    """What one fault does to one group: its kind, how long it lasts (seconds), the backlog it
    leaves (events), the capacity that drains it (events/s), and the events a crash redelivers
    or loses."""

    kind: str
    seconds: float
    backlog: float
    capacity_after: float
    redelivered: int = 0
    lost: int = 0


class GroupUnderLoad(NamedTuple):
    """A consumer group as the outage rules see it: its name and settings, mean arrivals
    ``arrivals_eps``, capacity ``capacity_eps``, step time ``step_s`` and the model call's
    tokens."""

    name: GroupName
    cg: ConsumerGroup
    arrivals_eps: float
    capacity_eps: float
    step_s: float
    tokens_per_call: int


def _owned_by_first(partitions: int, members: int, first: int) -> int:
    """Partitions owned by the first ``first`` of ``members`` (ids in order) after a fresh
    assignment: every assignor here gives member i floor(P/I) + (1 if i < P mod I)."""
    if members <= 0:
        return 0
    per, extra = divmod(partitions, members)
    first = min(first, members)
    return first * per + min(first, extra)


def outage_for(
    fault: object, group: GroupUnderLoad, design: Design, others: Sequence[object] = ()
) -> Outage | None:
    """Backlog ``fault`` leaves in ``group`` and the capacity that drains it; ``None`` when the
    fault does not touch the group (or is not in the estimate, such as broker loss).
    ``others``: the scenario's faults (a fallback provider down at the same time carries
    nothing)."""
    if isinstance(fault, WorkerCrash) and fault.group == group.name:
        return _worker_crash(fault, group, design)
    if isinstance(fault, ConsumerPause) and fault.group == group.name:
        seconds = fault.duration_seconds
        backlog = backlog_after_outage(group.arrivals_eps, seconds)
        return Outage("consumer_pause", seconds, backlog, group.capacity_eps)
    if isinstance(fault, ProviderOutage) and group.name == "agent":
        return _provider_outage(fault, group, design, others)
    if isinstance(fault, StateFailover) and group.name == "state":
        seconds = design.state_store.failover_seconds
        backlog = backlog_after_outage(group.arrivals_eps, seconds)
        return Outage("state_failover", seconds, backlog, group.capacity_eps)
    if isinstance(fault, Rebalance) and fault.group == group.name:
        return _rebalance(fault, group, design)
    return None


def _worker_crash(fault: WorkerCrash, group: GroupUnderLoad, design: Design) -> Outage | None:
    cg = group.cg
    lam = group.arrivals_eps
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
        partitions = design.event_log.partitions
        share = _owned_by_first(partitions, total, crashed) / partitions
        noticed = min(seconds, cg.session_timeout_ms / 1000.0)
        backlog = share * lam * noticed
        alive_limits = capacity_limits(
            design,
            group.name,
            group.step_s,
            group.tokens_per_call,
            instances=alive,
            provider=design.model.primary,
        )
        alive_cap, _ = smallest_limit(alive_limits)
        backlog = max(0.0, backlog + (lam - alive_cap) * (seconds - noticed))
    redelivered, lost = _crash_redelivery(design, cg, crashed, lam, total)
    return Outage("worker_crash", seconds, backlog, group.capacity_eps, redelivered, lost)


def _provider_outage(
    fault: ProviderOutage, group: GroupUnderLoad, design: Design, others: Sequence[object]
) -> Outage | None:
    seconds = fault.duration_seconds
    if fault.provider == "fallback":
        return None
    during = 0.0
    model = design.model
    start, end = fault.at_seconds, fault.at_seconds + seconds
    fallback_down = any(
        isinstance(o, ProviderOutage)
        and o.provider == "fallback"
        and o.at_seconds <= start
        and o.at_seconds + o.duration_seconds >= end
        for o in others
    )
    if model.fallback.enabled and model.circuit_breaker.enabled and not fallback_down:
        fallback_limits = capacity_limits(
            design, group.name, group.step_s, group.tokens_per_call, provider=model.fallback
        )
        during, _ = smallest_limit(fallback_limits)
    backlog = backlog_after_outage(group.arrivals_eps, seconds, during)
    return Outage("provider_outage", seconds, backlog, group.capacity_eps)


def _rebalance(fault: Rebalance, group: GroupUnderLoad, design: Design) -> Outage:
    cg = group.cg
    partitions = design.event_log.partitions
    if cg.assignment is AssignmentStrategy.cooperative_sticky and cg.instances >= 2:
        share = _owned_by_first(partitions, cg.instances, 1) / partitions
    else:
        share = 1.0
    seconds = fault.pause_seconds
    backlog = share * backlog_after_outage(group.arrivals_eps, seconds)
    return Outage("rebalance", seconds, backlog, group.capacity_eps)


def _crash_redelivery(
    design: Design, cg: ConsumerGroup, crashed: int, lam: float, instances: int
) -> tuple[int, int]:
    """Events redelivered and events lost when ``crashed`` of ``instances`` members of ``cg``
    crash with arrivals ``lam`` events/s (rules in the module docstring)."""
    batch = redelivered_bound(crashed, cg.max_poll_records)
    commit = design.delivery.commit
    if commit is CommitMode.after_processing:
        return batch, 0
    if commit is CommitMode.before_processing:
        return 0, batch
    per_instance = lam / instances if instances else 0.0
    interval_work = math.ceil(per_instance * design.delivery.auto_commit_interval_ms / 1000.0)
    return batch + crashed * interval_work, batch
