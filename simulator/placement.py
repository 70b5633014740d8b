"""Where the event log keeps a partition's replicas, and what losing brokers does to it.

Placement: ``event_log.brokers`` brokers ``0..B-1``; partition ``p`` of every topic has
``replication_factor`` replicas on brokers ``(p + j) mod B`` for ``j = 0..RF-1``, the first being
its leader (Kafka's round-robin placement without racks). A ``broker_loss`` takes brokers
``0..n-1``; a ``follower_lag`` holds back the followers of the partitions brokers ``0..n-1``
lead. The simulation's fault (:mod:`simulator.faults.broker`) and the estimate
(:mod:`simulator.estimate.outages`) both read a partition's fate here.

The ISR (in-sync replicas) is every replica, except the followers of a ``follower_lag`` once
they have been behind ``replica_lag_time_max_ms``: the leader alone is then in sync. Unclean
leader election is off (Kafka's default since 0.11): a partition whose in-sync replicas are all
lost stays offline until they return, and a surviving out-of-sync follower never leads it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from simulator.design import Acks, Design
from simulator.scenario import BrokerLoss, FollowerLag


@dataclass(frozen=True)
class PartitionFate:
    """What a broker loss does to one partition: seconds of acknowledged writes lost before the
    loss (0 for none), whether producers block, whether writes during the loss are lost."""

    lost_window_s: float
    blocked: bool
    drops_during: bool


def replicas_of(design: Design, partition: int) -> list[int]:
    """The brokers holding ``partition``'s replicas, its leader first."""
    log = design.event_log
    return [(partition + j) % log.brokers for j in range(log.replication_factor)]


def lags(design: Design, partition: int, lag: FollowerLag) -> bool:
    """True when ``lag`` holds back ``partition``'s followers: it has some (replication factor 2
    or more) and its leader is one of the brokers whose followers lag."""
    log = design.event_log
    return log.replication_factor >= 2 and partition % log.brokers < min(lag.brokers, log.brokers)


def isr_shrink_s(lag: FollowerLag) -> float | None:
    """When the lagging followers leave the ISR (``replica_lag_time_max_ms`` after the lag
    starts), seconds; None when the lag ends before (they catch up still in sync)."""
    wait_s = lag.replica_lag_time_max_ms / 1000.0
    return lag.at_seconds + wait_s if wait_s < lag.duration_seconds else None


def lag_gate(
    design: Design, partition: int, lag: FollowerLag, losses: Sequence[BrokerLoss] = ()
) -> tuple[float, bool]:
    """How long ``lag`` holds ``partition``'s producers: ``(until_s, refused)``, ``until_s``
    equal to the lag's start when it holds none.

    Only ``acks=all`` writes wait: the leader answers once every in-sync replica has a write, so
    they wait for the lagging followers until these leave the ISR (or catch up first). With an
    ISR of one against ``min_insync_replicas`` 2 or more the partition then refuses writes
    (NotEnoughReplicas, ``refused``) until the followers are back in sync: at the end of the lag,
    or when the leader returns from a loss in ``losses`` that takes it meanwhile."""
    start = float(lag.at_seconds)
    log = design.event_log
    if log.acks is not Acks.all or not lags(design, partition, lag):
        return start, False
    end = start + lag.duration_seconds
    shrink = isr_shrink_s(lag)
    if shrink is None:
        return end, False
    if log.min_insync_replicas <= 1:
        return shrink, False
    leader = replicas_of(design, partition)[0]
    for loss in sorted(losses, key=lambda f: f.at_seconds):
        if leader < min(loss.brokers, log.brokers) and start <= loss.at_seconds < end:
            end = max(end, loss.at_seconds + loss.duration_seconds)
    return end, True


def partition_fate(
    design: Design, partition: int, fault: BrokerLoss, lagging: Sequence[FollowerLag] = ()
) -> PartitionFate:
    """The fate of ``partition`` under ``fault``, ``lagging`` the scenario's follower lags (one
    on at the loss holds back the followers it ``lags``), with ``in_sync`` the ISR left:

    - none left: the partition is offline for the whole loss (no unclean election). Writes its
      lost leader held only in the page cache (``unflushed_ms``) are gone, or with a surviving
      follower that fell behind at ``t0``, the unflushed ones since ``t0`` (none when acks=all
      with ``min_insync_replicas`` 2 or more refused them). Producers block
      (``acks`` 1 or all) or, with ``acks=0``, lose what they send meanwhile;
    - ``acks=all``: nothing acknowledged is lost; with fewer than ``min_insync_replicas``
      in-sync replicas left the partition refuses writes (NotEnoughReplicas), producers block;
    - ``acks`` 0 or 1 with the leader lost: writes the leader acknowledged alone in the last
      ``follower_lag_ms`` (or since a lag began, for a lagging follower still in the ISR) are
      truncated away by the new leader."""
    log = design.event_log
    at = float(fault.at_seconds)
    lost_brokers = set(range(min(fault.brokers, log.brokers)))
    replicas = replicas_of(design, partition)
    behind_s = 0.0
    out_of_isr = False
    for lag in lagging:
        if lag.at_seconds <= at < lag.at_seconds + lag.duration_seconds and lags(
            design, partition, lag
        ):
            behind_s = max(behind_s, at - lag.at_seconds)
            shrink = isr_shrink_s(lag)
            out_of_isr = out_of_isr or (shrink is not None and shrink <= at)
    in_sync = replicas[:1] if out_of_isr else replicas
    alive = [b for b in replicas if b not in lost_brokers]
    alive_in_sync = [b for b in in_sync if b not in lost_brokers]
    unflushed_s = fault.unflushed_ms / 1000.0
    if not alive_in_sync:
        window = unflushed_s
        if alive:
            # The followers that fell behind survive with everything up to the lag's start; the
            # leader had the writes since alone, unless acks=all refused them (min.insync.replicas
            # 2 or more with an ISR of one).
            alone = log.acks is not Acks.all or log.min_insync_replicas <= 1
            window = min(unflushed_s, behind_s) if alone else 0.0
        return PartitionFate(
            window, blocked=log.acks is not Acks.none, drops_during=log.acks is Acks.none
        )
    if log.acks is Acks.all:
        return PartitionFate(
            0.0, blocked=len(alive_in_sync) < log.min_insync_replicas, drops_during=False
        )
    if replicas[0] in lost_brokers:
        window = max(fault.follower_lag_ms / 1000.0, behind_s)
        return PartitionFate(window, blocked=False, drops_during=False)
    return PartitionFate(0.0, blocked=False, drops_during=False)


def blocked_partitions(
    design: Design, fault: BrokerLoss, lagging: Sequence[FollowerLag] = ()
) -> int:
    """How many of a topic's ``event_log.partitions`` refuse writes (their producers block)
    while ``fault`` lasts; the same partitions of every topic."""
    return sum(
        partition_fate(design, p, fault, lagging).blocked
        for p in range(design.event_log.partitions)
    )


def isr_shrunk_partitions(design: Design, lag: FollowerLag) -> int:
    """How many of a topic's partitions ``lag`` leaves with their leader alone in sync (their
    followers behind past ``replica_lag_time_max_ms``)."""
    if isr_shrink_s(lag) is None:
        return 0
    return sum(lags(design, p, lag) for p in range(design.event_log.partitions))


def block_reason(design: Design, fault: BrokerLoss, lagging: Sequence[FollowerLag] = ()) -> str:
    """Why producers block under ``fault``, in the design's terms: the only replicas were on the
    lost brokers, the only in-sync one was (its followers had fallen behind), or acks=all with
    fewer in-sync replicas left than min.insync.replicas. ``""`` when no partition blocks."""
    log = design.event_log
    if not blocked_partitions(design, fault, lagging):
        return ""
    lost = min(fault.brokers, log.brokers)
    if log.replication_factor <= lost:
        copies = "copy was" if log.replication_factor == 1 else "copies were"
        return f"some partitions' only {copies} on the lost broker{'s' if lost > 1 else ''}"
    left = log.replication_factor - lost
    if any(
        not partition_fate(design, p, fault).blocked
        for p in range(log.partitions)
        if partition_fate(design, p, fault, lagging).blocked
    ):
        return (
            "the followers of some partitions had fallen behind and left the ISR, so their only "
            "in-sync replica was on the lost broker"
        )
    return (
        f"acks=all needs min.insync.replicas {log.min_insync_replicas} in sync, and "
        f"{left} of {log.replication_factor} replicas are left"
    )


def waiting_windows(design: Design, faults: Sequence[object]) -> list[tuple[float, float, int]]:
    """The windows in which the broker faults among ``faults`` (``broker_loss``,
    ``follower_lag``) hold producers, as ``(start_s, end_s, partitions)`` pieces in time order,
    ``partitions`` how many of a topic's partitions wait throughout the piece (at least one):
    a lag's :func:`lag_gate`, a loss's blocked partitions (:func:`partition_fate`) for its
    duration. A partition held by both in the same seconds counts once."""
    lagging = [f for f in faults if isinstance(f, FollowerLag)]
    losses = [f for f in faults if isinstance(f, BrokerLoss)]
    spans: list[list[tuple[float, float]]] = []
    for p in range(design.event_log.partitions):
        mine = []
        for lag in lagging:
            until, _ = lag_gate(design, p, lag, losses)
            if until > lag.at_seconds:
                mine.append((float(lag.at_seconds), until))
        for loss in losses:
            if partition_fate(design, p, loss, lagging).blocked:
                mine.append((float(loss.at_seconds), loss.at_seconds + loss.duration_seconds))
        spans.append(mine)
    cuts = sorted({t for mine in spans for span in mine for t in span})
    pieces: list[tuple[float, float, int]] = []
    for a, b in zip(cuts, cuts[1:], strict=False):
        count = sum(any(s <= a and b <= e for s, e in mine) for mine in spans)
        if count:
            if pieces and pieces[-1][1] == a and pieces[-1][2] == count:
                pieces[-1] = (pieces[-1][0], b, count)
            else:
                pieces.append((a, b, count))
    return pieces
