"""``broker_loss``: brokers of the event log are lost for ``duration_seconds``.

Placement: ``event_log.brokers`` brokers ``0..B-1``; partition ``p`` of every topic has
``replication_factor`` replicas on brokers ``(p + j) mod B`` for ``j = 0..RF-1``, the first being
its leader (Kafka's round-robin placement without racks). The fault takes brokers ``0..n-1``.
Per partition, with ``alive`` the replicas left:

- no replica left: the partition is offline for the whole fault. Writes its replicas held only in
  the page cache (``unflushed_ms``: Kafka leaves flushing to the OS) are gone. Producers block
  (``acks`` 1 or all) or, with ``acks=0``, lose every event they send meanwhile.
- ``acks=all``: a write is acknowledged once every in-sync replica has it, so a new leader has
  everything: nothing is lost. With fewer than ``min_insync_replicas`` replicas left the
  partition refuses writes (NotEnoughReplicas) and producers block until the brokers return.
- ``acks=1`` or ``0`` and the leader lost: writes the leader acknowledged alone in the last
  ``follower_lag_ms`` (before followers fetched them) are truncated away by the new leader.

Counted: ``lost`` is every acknowledged event that vanished from the log (a consumer may already
have read some of them; the ones it had not are skipped, never processed), plus events an
``acks=0`` producer sent to an offline partition. ``producer_blocked_seconds`` is the time
during which some partition refused writes. Events produced to a blocked partition wait in the
producer and enter the log when the brokers return; their latency counts the wait, and the lag
chart counts them as waiting from their original arrival. Leader elections are taken as instant.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import simpy

from simulator.engine.causal import Gate
from simulator.engine.hooks import FaultLayer, amend
from simulator.engine.partition import DROP
from simulator.placement import PartitionFate, partition_fate
from simulator.result import FaultWindow, SimulationResult
from simulator.scenario import BrokerLoss

if TYPE_CHECKING:
    from simulator.engine.consumers import ConsumerGroup
    from simulator.engine.partition import Partition
    from simulator.engine.run import Simulation
    from simulator.scenario import Fault


@dataclass
class BrokerLossOutcome:
    """One broker loss: acknowledged events lost, seconds producers were blocked."""

    start_s: float
    end_s: float
    lost: int = 0
    lost_after_read: int = 0
    blocked_partitions: int = 0
    delayed: int = 0
    blocked_seconds: float = 0.0


class BrokerLosses(FaultLayer):
    """``broker_loss`` faults (see the module docstring): one :class:`BrokerLossOutcome` per
    fault in ``outcomes``. Contributes to ``lost``, ``log_lost``, ``producer_blocked_seconds``,
    and a note per loss."""

    kinds = ("broker_loss",)

    def __init__(self) -> None:
        self.outcomes: list[BrokerLossOutcome] = []

    def start(self, sim: Simulation, fault: Fault) -> Generator[simpy.Event, Any, None]:
        """SimPy process of a ``broker_loss`` (see the module docstring)."""
        assert isinstance(fault, BrokerLoss)
        yield sim.env.timeout(fault.at_seconds)
        start = float(fault.at_seconds)
        end = start + fault.duration_seconds
        outcome = BrokerLossOutcome(start, end)
        self.outcomes.append(outcome)
        sim.fault_windows.append(FaultWindow(kind=fault.kind, start_s=start, end_s=end))
        partitions = range(sim.design.event_log.partitions)
        fates = [partition_fate(sim.design, p, fault) for p in partitions]
        world = sim.world
        gates: list[Gate] = []
        for kind, group in enumerate(sim.groups.values()):
            group.advance(start)
            group.settle(start)
            for part, fate in zip(group.parts, fates, strict=True):
                if world is not None:
                    # Causal runs: the events the loss would block or drop are not produced yet.
                    _apply(group, part, _before_only(fate), start, end, outcome)
                    if fate.blocked or fate.drops_during:
                        gate = Gate(end, drop=fate.drops_during)
                        world.gate(kind, part.pid, gate)
                        gates.append(gate)
                        if fate.blocked:
                            outcome.blocked_partitions += 1
                elif part.n:
                    _apply(group, part, fate, start, end, outcome)
        if gates:
            yield sim.env.timeout(max(0.0, min(end, sim.duration) - start))
            sim.advance(min(end, sim.duration))
            outcome.delayed += sum(g.delayed for g in gates)
            outcome.lost += sum(g.dropped for g in gates)
        if outcome.blocked_partitions:
            outcome.blocked_seconds = min(end, max(sim.duration, start)) - start

    def contribute(self, sim: Simulation, result: SimulationResult) -> SimulationResult:
        """The acknowledged events lost, the producers' blocked seconds, a note per loss."""
        losses = self.outcomes
        if not losses:
            return result
        notes = [
            f"broker loss {b.start_s:g}-{b.end_s:g} s: {b.lost} acknowledged events lost "
            f"({b.lost_after_read} already read), {b.blocked_partitions} partitions refused "
            f"writes, {b.delayed} events waited in producers"
            for b in losses
        ]
        log_lost = sum(b.lost for b in losses)
        return amend(
            result,
            notes,
            lost=result.metrics.lost + log_lost,
            log_lost=log_lost,
            producer_blocked_seconds=float(sum(b.blocked_seconds for b in losses)),
        )


def _apply(
    group: ConsumerGroup,
    part: Partition,
    fate: PartitionFate,
    start: float,
    end: float,
    outcome: BrokerLossOutcome,
) -> None:
    last = part.log_end(start)
    first = part.log_end(start - fate.lost_window_s) if fate.lost_window_s > 0 else last
    during_end = part.log_end(end - 1e-9) if (fate.blocked or fate.drops_during) else last
    if part.fail_attempts is None:
        part.fail_attempts = {}
    busy = part.cur if part.cur >= 0 else -1
    for offset in range(first, last):
        outcome.lost += 1
        if offset < part.hw or offset == busy:
            outcome.lost_after_read += 1
        else:
            part.fail_attempts[offset] = DROP
    if fate.drops_during:
        for offset in range(last, during_end):
            part.fail_attempts[offset] = DROP
        outcome.lost += during_end - last
    elif fate.blocked and during_end > last:
        outcome.blocked_partitions += 1
        arrival = part.arrival
        for offset in range(last, during_end):
            arrival[offset] = end
        outcome.delayed += during_end - last
    elif fate.blocked:
        outcome.blocked_partitions += 1


def _before_only(fate: PartitionFate) -> PartitionFate:
    """The part of ``fate`` that acts on events already in the log (the acknowledged writes a
    loss takes); blocking and dropping act as events are produced (``CausalRuns.gate``)."""
    return PartitionFate(fate.lost_window_s, blocked=False, drops_during=False)
