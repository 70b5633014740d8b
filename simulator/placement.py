"""Where the event log keeps a partition's replicas, and what losing brokers does to it.

Placement: ``event_log.brokers`` brokers ``0..B-1``; partition ``p`` of every topic has
``replication_factor`` replicas on brokers ``(p + j) mod B`` for ``j = 0..RF-1``, the first being
its leader (Kafka's round-robin placement without racks). A ``broker_loss`` takes brokers
``0..n-1``. The simulation's fault (:mod:`simulator.faults.broker`) and the estimate
(:mod:`simulator.estimate.outages`) both read a partition's fate here.
"""

from __future__ import annotations

from dataclasses import dataclass

from simulator.design import Acks, Design
from simulator.scenario import BrokerLoss


@dataclass(frozen=True)
class PartitionFate:
    """What a broker loss does to one partition: seconds of acknowledged writes lost before the
    loss (0 for none), whether producers block, whether writes during the loss are lost."""

    lost_window_s: float
    blocked: bool
    drops_during: bool


def partition_fate(design: Design, partition: int, fault: BrokerLoss) -> PartitionFate:
    """The fate of ``partition`` under ``fault``, with ``alive`` its replicas left:

    - none left: the partition is offline; writes held only in the page cache
      (``unflushed_ms``) are gone; producers block (``acks`` 1 or all) or, with ``acks=0``,
      lose what they send meanwhile;
    - ``acks=all``: nothing acknowledged is lost; with fewer than ``min_insync_replicas``
      replicas left the partition refuses writes (NotEnoughReplicas) and producers block;
    - ``acks`` 0 or 1 with the leader lost: writes the leader acknowledged alone in the last
      ``follower_lag_ms`` are truncated away by the new leader."""
    log = design.event_log
    brokers = log.brokers
    lost_brokers = set(range(min(fault.brokers, brokers)))
    replicas = [(partition + j) % brokers for j in range(log.replication_factor)]
    alive = [b for b in replicas if b not in lost_brokers]
    leader_lost = replicas[0] in lost_brokers
    if not alive:
        return PartitionFate(
            fault.unflushed_ms / 1000.0,
            blocked=log.acks is not Acks.none,
            drops_during=log.acks is Acks.none,
        )
    if log.acks is Acks.all:
        return PartitionFate(0.0, blocked=len(alive) < log.min_insync_replicas, drops_during=False)
    if leader_lost:
        return PartitionFate(fault.follower_lag_ms / 1000.0, blocked=False, drops_during=False)
    return PartitionFate(0.0, blocked=False, drops_during=False)


def blocked_partitions(design: Design, fault: BrokerLoss) -> int:
    """How many of a topic's ``event_log.partitions`` refuse writes (their producers block)
    while ``fault`` lasts; the same partitions of every topic."""
    return sum(partition_fate(design, p, fault).blocked for p in range(design.event_log.partitions))


def block_reason(design: Design, fault: BrokerLoss) -> str:
    """Why producers block under ``fault``, in the design's terms: the only replicas were on the
    lost brokers, or acks=all with fewer in-sync replicas left than min.insync.replicas. ``""``
    when no partition blocks."""
    log = design.event_log
    if not blocked_partitions(design, fault):
        return ""
    lost = min(fault.brokers, log.brokers)
    if log.replication_factor <= lost:
        copies = "copy was" if log.replication_factor == 1 else "copies were"
        return f"some partitions' only {copies} on the lost broker{'s' if lost > 1 else ''}"
    left = log.replication_factor - lost
    return (
        f"acks=all needs min.insync.replicas {log.min_insync_replicas} in sync, and "
        f"{left} of {log.replication_factor} replicas are left"
    )
