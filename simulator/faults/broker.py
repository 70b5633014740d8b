"""``broker_loss`` and ``follower_lag``: brokers of the event log lost for ``duration_seconds``;
followers that fall behind and leave the ISR.

Placement and the ISR: :mod:`simulator.placement` (partition ``p``'s replicas on brokers
``(p + j) mod B``, the first its leader). A ``broker_loss`` takes brokers ``0..n-1`` hard: what
they held only in the page cache (``unflushed_ms``: Kafka leaves flushing to the OS) is gone.
Per partition, with its in-sync replicas left (:func:`simulator.placement.partition_fate`):

- none left: the partition is offline for the whole loss (unclean leader election is off). Its
  leader's unflushed writes are gone (with a surviving follower that fell behind, the unflushed
  ones it lacks). Producers block (``acks`` 1 or all) or, with ``acks=0``, lose every event they
  send meanwhile.
- ``acks=all``: a write is acknowledged once every in-sync replica has it, so a new leader has
  everything: nothing is lost. With fewer than ``min_insync_replicas`` in sync the partition
  refuses writes (NotEnoughReplicas) and producers block until the brokers return.
- ``acks=1`` or ``0`` and the leader lost: writes the leader acknowledged alone in the last
  ``follower_lag_ms`` (before followers fetched them) are truncated away by the new leader.

A ``follower_lag`` holds back the followers of the partitions brokers ``0..n-1`` lead
(:func:`simulator.placement.lag_gate`): ``acks=all`` writes wait for them until they leave the
ISR after ``replica_lag_time_max_ms``; the leader is then alone in sync. With
``min_insync_replicas`` 1 it goes on acknowledging writes alone, which a later loss of that
leader takes with its page cache; with 2 or more the partition refuses writes until the
followers are back in sync (the lag's end, or the leader's return from a loss).

Counted: ``lost`` is every acknowledged event that vanished from the log (a consumer may already
have read some of them; the ones it had not are skipped, never processed), plus events an
``acks=0`` producer sent to an offline partition. ``producer_blocked_seconds`` is the time
during which some partition's producers waited (it refused writes, or its acks=all writes waited
for lagging followers); ``isr_shrunk_partitions`` the partitions of a topic whose ISR shrank to
the leader alone. Events produced to a blocked partition wait in the producer and enter the log
when it takes writes again; their latency counts the wait, and the lag chart counts them as
waiting from their original arrival. Leader elections are taken as instant.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import simpy

from simulator.engine.causal import Gate
from simulator.engine.hooks import FaultLayer, amend
from simulator.engine.partition import DROP
from simulator.placement import (
    PartitionFate,
    isr_shrunk_partitions,
    lag_gate,
    partition_fate,
)
from simulator.result import FaultWindow, SimulationResult
from simulator.scenario import BrokerLoss, FollowerLag

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


@dataclass
class FollowerLagOutcome:
    """One follower lag: partitions of a topic whose ISR shrank to the leader alone, whose
    producers waited, and of those that refused writes (the same partitions of every topic);
    events that waited in producers (all topics)."""

    start_s: float
    end_s: float
    isr_shrunk: int = 0
    held_partitions: int = 0
    refused_partitions: int = 0
    delayed: int = 0


class BrokerLosses(FaultLayer):
    """``broker_loss`` and ``follower_lag`` faults (see the module docstring): one
    :class:`BrokerLossOutcome` per loss in ``outcomes``, one :class:`FollowerLagOutcome` per lag
    in ``lags``. Contributes to ``lost``, ``log_lost``, ``producer_blocked_seconds``,
    ``isr_shrunk_partitions``, and a note per fault."""

    kinds = ("broker_loss", "follower_lag")

    def __init__(self) -> None:
        self.outcomes: list[BrokerLossOutcome] = []
        self.lags: list[FollowerLagOutcome] = []
        self.waits: set[tuple[float, float]] = set()
        """Windows ``(start, end)`` seconds in which some partition's producers waited."""

    def start(self, sim: Simulation, fault: Fault) -> Generator[simpy.Event, Any, None]:
        """SimPy process of a ``broker_loss`` or a ``follower_lag`` (module docstring)."""
        if isinstance(fault, FollowerLag):
            yield from self._lag(sim, fault)
            return
        assert isinstance(fault, BrokerLoss)
        yield sim.env.timeout(fault.at_seconds)
        start = float(fault.at_seconds)
        end = start + fault.duration_seconds
        outcome = BrokerLossOutcome(start, end)
        self.outcomes.append(outcome)
        sim.fault_windows.append(FaultWindow(kind=fault.kind, start_s=start, end_s=end))
        lagging = [f for f in sim.scenario.faults if isinstance(f, FollowerLag)]
        partitions = range(sim.design.event_log.partitions)
        fates = [partition_fate(sim.design, p, fault, lagging) for p in partitions]
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
                        if fate.blocked:
                            outcome.blocked_partitions += 1
                        if fate.blocked and _held_until(world.gates.get((kind, part.pid))) >= end:
                            continue  # a follower lag already holds its producers as long
                        gate = Gate(end, drop=fate.drops_during)
                        world.gate(kind, part.pid, gate)
                        gates.append(gate)
                elif part.n:
                    _apply(group, part, fate, start, end, outcome)
        if gates:
            yield sim.env.timeout(max(0.0, min(end, sim.duration) - start))
            sim.advance(min(end, sim.duration))
            outcome.delayed += sum(g.delayed for g in gates)
            outcome.lost += sum(g.dropped for g in gates)
        if outcome.blocked_partitions:
            outcome.blocked_seconds = min(end, max(sim.duration, start)) - start
            self.waits.add((start, end))

    def _lag(self, sim: Simulation, fault: FollowerLag) -> Generator[simpy.Event, Any, None]:
        """SimPy process of a ``follower_lag``: from its start, the producers of the partitions
        whose followers lag wait as :func:`simulator.placement.lag_gate` says."""
        yield sim.env.timeout(fault.at_seconds)
        start = float(fault.at_seconds)
        design = sim.design
        outcome = FollowerLagOutcome(start, start + fault.duration_seconds)
        outcome.isr_shrunk = isr_shrunk_partitions(design, fault)
        self.lags.append(outcome)
        sim.fault_windows.append(FaultWindow(kind=fault.kind, start_s=start, end_s=outcome.end_s))
        losses = [f for f in sim.scenario.faults if isinstance(f, BrokerLoss)]
        holds = [lag_gate(design, p, fault, losses) for p in range(design.event_log.partitions)]
        self.waits.update((start, until) for until, _ in holds if until > start)
        outcome.held_partitions = sum(until > start for until, _ in holds)
        outcome.refused_partitions = sum(refused for until, refused in holds if until > start)
        world = sim.world
        gates: list[Gate] = []
        for kind, group in enumerate(sim.groups.values()):
            group.advance(start)
            group.settle(start)
            for part, (until, _) in zip(group.parts, holds, strict=True):
                if until <= start:
                    continue
                if world is not None:
                    gate = Gate(until, drop=False)
                    world.gate(kind, part.pid, gate)
                    gates.append(gate)
                elif part.n:
                    outcome.delayed += _hold(part, start, until)
        if gates:
            last = max(g.until_s for g in gates)
            yield sim.env.timeout(max(0.0, min(last, sim.duration) - start))
            sim.advance(min(last, sim.duration))
            outcome.delayed += sum(g.delayed for g in gates)

    def contribute(self, sim: Simulation, result: SimulationResult) -> SimulationResult:
        """The acknowledged events lost, the producers' waiting seconds, the partitions whose
        ISR shrank, a note per fault."""
        losses = self.outcomes
        if not losses and not self.lags:
            return result
        notes = [
            f"followers behind {g.start_s:g}-{g.end_s:g} s: {g.isr_shrunk} partitions of each "
            f"topic left with their leader alone in sync, {g.held_partitions} held their "
            f"producers ({g.refused_partitions} refused writes), {g.delayed} events waited in "
            "producers"
            for g in self.lags
        ]
        notes += [
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
            producer_blocked_seconds=_union_s(self.waits, sim.duration),
            isr_shrunk_partitions=max((g.isr_shrunk for g in self.lags), default=0),
        )


def _held_until(gate: Gate | None) -> float:
    """Until when ``gate`` holds its partition's producers, seconds (-inf for none, or for a
    gate that drops what they send instead)."""
    return gate.until_s if gate is not None and not gate.drop else float("-inf")


def _union_s(windows: set[tuple[float, float]], duration_s: float) -> float:
    """Seconds of ``[0, duration_s]`` inside at least one of ``windows``."""
    total, reach = 0.0, 0.0
    for start, end in sorted(windows):
        start, end = max(start, reach), min(end, duration_s)
        if end > start:
            total += end - start
            reach = end
    return float(total)


def _hold(part: Partition, start: float, until: float) -> int:
    """Open-loop events: the ones produced to ``part`` in ``[start, until)`` wait in their
    producers and enter the log at ``until``; how many."""
    first, last = part.log_end(start), part.log_end(until - 1e-9)
    arrival = part.arrival
    for offset in range(first, last):
        arrival[offset] = until
    return last - first


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
