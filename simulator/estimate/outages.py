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
- ``broker_loss`` and ``follower_lag`` (causal runs only): the partitions that refuse writes
  (:func:`simulator.placement.waiting_windows`: a loss's blocked partitions; a lag's acks=all
  writes waiting for the ISR to shrink, or refused below min.insync.replicas until it regrows)
  hold their producers' events, and the runs behind them wait; the same partitions of every
  topic. The acknowledged writes a loss takes are the simulation's to count.
- ``rebalance`` pauses every partition (eager: range, round robin) or only the partitions of the
  member that leaves (cooperative sticky) for ``pause_seconds``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from simulator.assignment import REBALANCE_SYNC_S
from simulator.capacity import capacity_limits, smallest_limit
from simulator.closed_forms.batches import redelivered_bound
from simulator.closed_forms.drain import backlog_after_outage
from simulator.closed_forms.replay import pause_replay_estimate
from simulator.design import AssignmentStrategy, CommitMode, ConsumerGroup, Design
from simulator.estimate.held import RunWork
from simulator.estimate.recovery import Spread, Window, partition_drain_s
from simulator.groups import GroupName
from simulator.placement import waiting_windows
from simulator.scenario import (
    BrokerLoss,
    ConsumerPause,
    FollowerLag,
    ProviderOutage,
    Rebalance,
    StateFailover,
    WorkerCrash,
)


@dataclass
class Outage:
    """What one fault does to one group: its kind, how long it lasts (seconds), the backlog it
    leaves (events), the capacity that drains it (events/s), and the events a crash redelivers
    or loses; ``share``: the share of the partitions holding the backlog."""

    kind: str
    seconds: float
    backlog: float
    capacity_after: float
    redelivered: int = 0
    lost: int = 0
    share: float = 1.0
    """Share of the group's partitions the backlog sits on (a partial crash's)."""


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
        # The group is back when its offsets let it (an operator's reset after a "none" error
        # included); the work is the events that arrived meanwhile plus the replayed events whose
        # dedupe record had expired (the replay's own closed form).
        replay = pause_replay_estimate(design, group.arrivals_eps, group.capacity_eps, fault)
        seconds = replay.restarted_s - fault.at_seconds
        backlog = replay.backlog + replay.duplicate_effects
        return Outage("consumer_pause", seconds, backlog, group.capacity_eps)
    if isinstance(fault, ProviderOutage) and group.name == "agent":
        return _provider_outage(fault, group, design, others)
    if isinstance(fault, StateFailover) and group.name == "state":
        seconds = design.state_store.promote_seconds
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
    share = 1.0
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
        if seconds <= noticed:
            share = _owned_by_first(partitions, total, crashed) / partitions
    redelivered, lost = _crash_redelivery(design, cg, crashed, lam, total)
    return Outage(
        "worker_crash", seconds, backlog, group.capacity_eps, redelivered, lost, share=share
    )


def _provider_outage(
    fault: ProviderOutage, group: GroupUnderLoad, design: Design, others: Sequence[object]
) -> Outage | None:
    seconds = fault.duration_seconds
    if fault.provider == "fallback":
        return None
    carried = _fallback_carries(fault, group, design, others)
    backlog = backlog_after_outage(group.arrivals_eps, seconds, carried or 0.0)
    return Outage("provider_outage", seconds, backlog, group.capacity_eps)


def _fallback_carries(
    fault: ProviderOutage, group: GroupUnderLoad, design: Design, others: Sequence[object]
) -> float | None:
    """Model calls a second the fallback carries through a primary outage: its capacity, when a
    circuit breaker switches to it and it is not down over the same window (``others``); None
    when nothing carries the calls."""
    model = design.model
    start, end = fault.at_seconds, fault.at_seconds + fault.duration_seconds
    fallback_down = any(
        isinstance(o, ProviderOutage)
        and o.provider == "fallback"
        and o.at_seconds <= start
        and o.at_seconds + o.duration_seconds >= end
        for o in others
    )
    if not (model.fallback.enabled and model.circuit_breaker.enabled) or fallback_down:
        return None
    limits = capacity_limits(
        design, "agent", group.step_s, group.tokens_per_call, provider=model.fallback
    )
    return smallest_limit(limits)[0]


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


def _held_share(
    runs: RunWork, stalled: GroupName, group: GroupUnderLoad, share: float, seconds: float
) -> float:
    """The share of ``group``'s work a stall of ``share`` of ``stalled``'s partitions holds,
    averaged over ``seconds`` (the held events at its end over the work due meanwhile), 0..1."""
    due = group.arrivals_eps * seconds
    if due <= 0:
        return 0.0
    return min(1.0, runs.held(stalled, group.name, share, seconds) / due)


def _release_s(runs: RunWork, stalled: GroupName, share: float, seconds: float) -> float:
    """Seconds after a partial crash that ends before it is noticed until its partitions work
    again and have done the events queued on them: the members rejoin (a rebalance's
    :data:`simulator.assignment.REBALANCE_SYNC_S`), then each partition works off its queue one
    event at a time (the queued events spread over the stalled partitions like balls in bins:
    :func:`simulator.estimate.recovery.partition_drain_s`). The runs held there move no sooner."""
    partitions = max(1, int(round(runs.design.event_log.partitions * share)))
    queued = runs.held(stalled, stalled, share, seconds, queued_only=True)
    step_s = runs.step_s(stalled)
    if queued <= 0 or step_s <= 0:
        return REBALANCE_SYNC_S
    per_partition = 1.0 / step_s
    clear = partition_drain_s(
        queued, Spread(partitions, 1.0, 1.0), partitions * per_partition, per_partition
    )
    return REBALANCE_SYNC_S + clear


def causal_window(
    fault: object,
    group: GroupUnderLoad,
    design: Design,
    runs: RunWork,
    others: Sequence[object] = (),
) -> list[Window]:
    """What ``fault`` does to causal runs, seen from ``group`` (the group whose queue drains):
    the windows in which it stalls a share of the runs' work (a stalled run's work in every
    group waits), as :class:`simulator.estimate.recovery.Window`. ``runs``: the scenario's runs,
    for what a partial stall holds (:meth:`simulator.estimate.held.RunWork.held`): a task stops
    when it reaches a stalled key, not before. A broker loss stalls the partitions that refuse
    writes in every group (a run waits at the first event it cannot produce). Empty for a fault
    the estimate leaves out (a rolling restart, a member's pause, a poison event, a saga) and for
    a broker loss no partition blocks under."""
    cap = group.capacity_eps
    if isinstance(fault, WorkerCrash):
        cg = design.consumers.by_name(fault.group)
        crashed = (
            cg.instances if fault.instances == "all" else min(int(fault.instances), cg.instances)
        )
        if crashed <= 0:
            return []
        start, seconds = float(fault.at_seconds), float(fault.duration_seconds)
        partitions = design.event_log.partitions
        if crashed >= cg.instances:
            served = 0.0 if fault.group == group.name else 1.0
            return [Window(start, start + seconds, 1.0, served, 0.0 if served == 0 else cap)]
        share = _owned_by_first(partitions, cg.instances, crashed) / partitions
        noticed = min(seconds, cg.session_timeout_ms / 1000.0)
        stalled = _held_share(runs, fault.group, group, share, noticed)
        mine = fault.group == group.name
        release = 0.0
        if seconds <= noticed:
            release = _release_s(runs, fault.group, share, noticed)
        windows = [
            Window(
                start,
                start + noticed,
                stalled,
                1.0 - share if mine else 1.0,
                cap * (1 - share),
                release_s=release,
            )
        ]
        if seconds > noticed and mine:
            alive = capacity_limits(
                design,
                group.name,
                group.step_s,
                group.tokens_per_call,
                instances=cg.instances - crashed,
                provider=design.model.primary,
            )
            alive_cap, _ = smallest_limit(alive)
            short = max(0.0, 1.0 - alive_cap / group.arrivals_eps) if group.arrivals_eps else 0.0
            windows.append(Window(start + noticed, start + seconds, short, 1.0, alive_cap))
        return windows
    if isinstance(fault, ConsumerPause):
        start = float(fault.at_seconds)
        served = 0.0 if fault.group == group.name else 1.0
        return [Window(start, start + fault.duration_seconds, 1.0, served, cap * served)]
    if isinstance(fault, StateFailover):
        start = float(fault.at_seconds)
        seconds = design.state_store.promote_seconds
        return [Window(start, start + seconds, 1.0, 1.0, cap, retry=design.failures.retry)]
    if isinstance(fault, ProviderOutage):
        return _provider_window(fault, group, design, others)
    if isinstance(fault, BrokerLoss | FollowerLag):
        return _broker_windows(fault, group, design, runs, others)
    if isinstance(fault, Rebalance):
        cg = design.consumers.by_name(fault.group)
        partitions = design.event_log.partitions
        share = 1.0
        if cg.assignment is AssignmentStrategy.cooperative_sticky and cg.instances >= 2:
            share = _owned_by_first(partitions, cg.instances, 1) / partitions
        start = float(fault.at_seconds)
        stalled = _held_share(runs, fault.group, group, share, fault.pause_seconds)
        return [Window(start, start + fault.pause_seconds, stalled, 1.0, cap)]
    return []


def _broker_windows(
    fault: BrokerLoss | FollowerLag,
    group: GroupUnderLoad,
    design: Design,
    runs: RunWork,
    others: Sequence[object],
) -> list[Window]:
    """The broker faults of the scenario (``others``, or ``fault`` alone) together: the pieces
    of time in which a share of the partitions hold their producers
    (:func:`simulator.placement.waiting_windows`: a loss's blocked partitions, a follower lag's
    acks=all writes waiting for the ISR to shrink or refused below min.insync.replicas), each a
    window; they are all given to the first broker fault of the scenario (the others give none),
    so that a partition a lag and a loss both hold counts once."""
    faults = [f for f in others if isinstance(f, BrokerLoss | FollowerLag)] or [fault]
    if faults[0] is not fault:
        return []
    windows: list[Window] = []
    before, since = 0, -math.inf
    for start, end, blocked in waiting_windows(design, faults):
        share = blocked / design.event_log.partitions
        seconds = end - start
        stalled = 1.0
        if share < 1.0:
            due = group.arrivals_eps * seconds
            held = runs.held(None, group.name, share, seconds)
            stalled = min(1.0, held / due) if due > 0 else 0.0
        # Right after another piece, its held work stays held on the partitions still waiting.
        served = 1.0 - min(before, blocked) / before if since == start and before else 1.0
        windows.append(Window(start, end, stalled, served, group.capacity_eps))
        before, since = blocked, end
    return windows


def _provider_window(
    fault: ProviderOutage, group: GroupUnderLoad, design: Design, others: Sequence[object]
) -> list[Window]:
    """A primary provider outage: the fallback behind a breaker carries what it can (the rest of
    the runs stall); without one, or with the fallback down too, every run stalls and the agent
    workers back off with the model's retry policy."""
    if fault.provider == "fallback":
        return []
    start, end = float(fault.at_seconds), float(fault.at_seconds + fault.duration_seconds)
    lam = group.arrivals_eps
    carried = _fallback_carries(fault, group, design, others)
    if carried is not None:
        stalled = max(0.0, 1.0 - carried / lam) if lam > 0 else 0.0
        if group.name != "agent":
            return [Window(start, end, stalled, 1.0, group.capacity_eps)]
        return [Window(start, end, stalled, 1.0, carried)]
    served = 1.0 if group.name != "agent" else 0.0
    return [
        Window(
            start,
            end,
            1.0,
            served,
            group.capacity_eps * served,
            retry=design.model.retry,
            hang=fault.hang_until_end,
        )
    ]
