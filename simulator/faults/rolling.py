"""``rolling_restart`` (a rolling deploy) and ``member_pause`` (a healthy member that goes silent).

**A rolling deploy** restarts a group's instances one after another: instance ``i`` stops at
``at_seconds + i * interval_seconds`` and is back ``down_seconds`` later. A deploy stops an
instance gracefully: it finishes the batches it is processing and commits them (``mid_batch``
False), and its consumer leaves the group (``LeaveGroup``), so the coordinator rebalances at once,
without waiting for the session timeout; when the instance is back it joins (another rebalance).
Each instance costs the group two rebalances, and what each rebalance pauses is the assignment
strategy's doing (``simulator.engine.membership``): an eager strategy (range, round robin)
revokes *every* partition, waits for every member's batch in progress and resumes them all after
the join and sync; cooperative sticky (KIP-429) revokes only the partitions that move (those of the
leaving member, then those handed to the returning one) while every other partition keeps being
processed. The strategy's price is therefore lag and latency during a deploy.

**A member pause** stops one live member's heartbeats for ``duration_seconds`` (a stop-the-world
garbage collection, a network blip) while its process keeps its state. Kafka's coordinator evicts a
member it has not heard from for ``session.timeout.ms``: if the pause lasts longer than the design's
``session_timeout_ms``, the healthy member is evicted at ``start + session timeout`` exactly as if
it had crashed then (its steps in progress are abandoned, its uncommitted records redelivered to
the others: a rebalance) and it rejoins when the pause ends (another rebalance). A pause shorter
than the timeout costs only the pause itself: the member's steps in progress finish late, by the
pause's length. Approximation: the pause holds the member's steps in progress (each ends
``duration_seconds`` later, ``Membership.hold``); an idle partition of the member may start a record
that arrives during the pause.

Sources: Kafka consumer configuration (``session.timeout.ms``, ``partition.assignment.strategy``);
KIP-429 (incremental cooperative rebalancing).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import simpy

from simulator.engine.hooks import FaultLayer, amend
from simulator.result import FaultWindow, SimulationResult
from simulator.scenario import MemberPause, RollingRestart

if TYPE_CHECKING:
    from simulator.engine.consumers import ConsumerGroup
    from simulator.engine.run import Simulation
    from simulator.scenario import Fault


class RollingRestarts(FaultLayer):
    """``rolling_restart`` faults (see the module docstring)."""

    kinds = ("rolling_restart",)

    def start(self, sim: Simulation, fault: Fault) -> Generator[simpy.Event, Any, None]:
        """SimPy process of a ``rolling_restart``: each instance in turn leaves and rejoins."""
        assert isinstance(fault, RollingRestart)
        env = sim.env
        group = sim.groups[fault.group]
        yield env.timeout(fault.at_seconds)
        start = float(fault.at_seconds)
        last = start + (group.instances - 1) * fault.interval_seconds + fault.down_seconds
        sim.fault_windows.append(FaultWindow(kind=fault.kind, start_s=start, end_s=last))
        for i in range(group.instances):
            stop = start + i * fault.interval_seconds
            if stop > env.now:
                yield env.timeout(stop - env.now)
            env.process(_restart_one(group, i, stop, fault.down_seconds, env))


def _restart_one(
    group: ConsumerGroup, member: int, t: float, down_s: float, env: simpy.Environment
) -> Generator[simpy.Event, Any, None]:
    """Member ``member`` stops gracefully at ``t`` (leaving the group: a rebalance), and joins
    again ``down_s`` later (another rebalance)."""
    group.advance(t)
    group.crash(t, [member], mid_batch=False)
    group.rebalance(t)
    yield env.timeout(down_s)
    back = t + down_s
    group.advance(back)
    group.restart(back, [member])


class MemberPauses(FaultLayer):
    """``member_pause`` faults (see the module docstring). Counter: ``evictions`` (healthy
    members evicted because their pause outlasted the session timeout); a note when any were."""

    kinds = ("member_pause",)

    def __init__(self) -> None:
        self.evictions = 0

    def start(self, sim: Simulation, fault: Fault) -> Generator[simpy.Event, Any, None]:
        """SimPy process of a ``member_pause``: the pause, and the eviction when it outlasts the
        session timeout."""
        assert isinstance(fault, MemberPause)
        env = sim.env
        group = sim.groups[fault.group]
        yield env.timeout(fault.at_seconds)
        start = float(fault.at_seconds)
        end = start + fault.duration_seconds
        member = min(fault.member, group.instances - 1)
        if member < 0 or not group.alive[member] or member in group.stopping:
            return
        sim.fault_windows.append(FaultWindow(kind=fault.kind, start_s=start, end_s=end))
        group.advance(start)
        group.hold(start, member, fault.duration_seconds)
        evict_at = start + group.session_timeout_s
        if evict_at >= end:
            return
        yield env.timeout(evict_at - env.now)
        group.advance(evict_at)
        if not group.alive[member] or member in group.stopping:
            return
        self.evictions += 1
        group.crash(evict_at, [member])
        group.incarnation[member] -= 1  # the same process: its memory survives an eviction
        group.rebalance(evict_at)
        yield env.timeout(end - evict_at)
        group.advance(end)
        group.restart(end, [member])

    def contribute(self, sim: Simulation, result: SimulationResult) -> SimulationResult:
        """``healthy_members_evicted`` and a note on them."""
        if not self.evictions:
            return amend(result, healthy_members_evicted=0)
        return amend(
            result,
            [
                f"{self.evictions} healthy members evicted: their pause outlasted "
                f"session.timeout.ms (each an extra leave and rejoin, and its uncommitted work "
                f"redelivered)"
            ],
            healthy_members_evicted=self.evictions,
        )
