"""``rebalance`` faults and slow batches that outlast ``max_poll_interval_ms``.

**A rebalance fault** (``kind: rebalance``): at ``at_seconds`` the group rebalances with its
current members; eager strategies (range, round robin) revoke every partition, cooperative sticky
only those that move, and the new assignment starts ``pause_seconds`` after the revoked batches
are done.

**Slow batches** (worked-numbers item 3, seed 000's failure scenario 2): Kafka treats a consumer
that does not call ``poll`` within ``max.poll.interval.ms`` as failed. When a batch of a partition
took longer than that from its fetch to its end, the member was kicked: its commit of the batch
fails (``CommitFailedException``), it leaves the group (one rebalance), and when it polls again it
rejoins (another rebalance). Every partition it held goes back to its committed offset, so the slow
batch is redelivered, and with it whatever else the member had fetched and not committed; without
dedupe their effects are applied again. A redelivered batch that is as slow as the first is kicked
again: a rebalance storm that never drains. With durable dedupe the redelivered records are
skipped and the batch gets through.

A batch that never ends (a step retried without limit, a provider that stays down) gets its member
kicked too: a watchdog looks every :data:`WATCHDOG_FRACTION` of the interval for batches fetched
longer than ``max_poll_interval_ms`` ago and still running. Kafka removes such a member when the
interval expires; otherwise an eager rebalance would wait for it for ever.

Simplifications: the engine notices a slow batch at its end (Kafka: when the interval expires) and
the faults layer applies the kick at the next lag sample time (``duration / 2400`` at most); a
batch still running is noticed by the watchdog up to a tenth of the interval late; the kicked
process keeps its memory (in-memory dedupe survives a kick, not a crash).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import simpy

from simulator.design import Design
from simulator.engine.hooks import FaultLayer, Layers, amend
from simulator.engine.partition import ACTIVE, MASK, RETRY
from simulator.result import FaultWindow, SimulationResult
from simulator.scenario import Rebalance, Scenario

if TYPE_CHECKING:
    from simulator.engine.consumers import ConsumerGroup
    from simulator.engine.partition import Partition
    from simulator.engine.run import Simulation
    from simulator.scenario import Fault

BUSY_STATES = (ACTIVE, RETRY)
"""Partition states of a batch in progress."""
WATCHDOG_FRACTION = 0.1
"""The watchdog looks for overdue batches every this fraction of ``max_poll_interval_ms``."""
DUE_SLACK_S = 1e-6
"""A look is skipped only when it comes this much before the earliest possible overdue batch, so
float rounding never skips a look that would have found one."""


class Rebalances(FaultLayer):
    """``rebalance`` faults (see the module docstring)."""

    kinds = ("rebalance",)

    def start(self, sim: Simulation, fault: Fault) -> Generator[simpy.Event, Any, None]:
        """SimPy process of a ``rebalance`` fault: the group rebalances at ``at_seconds``."""
        assert isinstance(fault, Rebalance)
        yield sim.env.timeout(fault.at_seconds)
        t = float(fault.at_seconds)
        group = sim.groups[fault.group]
        group.advance(t)
        sim.fault_windows.append(
            FaultWindow(kind=fault.kind, start_s=t, end_s=t + fault.pause_seconds)
        )
        group.rebalance(t, pause_s=fault.pause_seconds)


class SlowBatches(FaultLayer):
    """Slow batches in every simulation: one :class:`SlowBatchKicks` per group (``kicks``, by
    group name), whose watchdog runs as a SimPy process. Contributes a note when members were
    kicked."""

    def __init__(self) -> None:
        self.kicks: dict[str, SlowBatchKicks] = {}

    @classmethod
    def wanted(cls, design: Design, scenario: Scenario) -> bool:
        """Always installed: any batch may outlast ``max_poll_interval_ms``."""
        return True

    def install(self, sim: Simulation, layers: Layers) -> None:
        """A :class:`SlowBatchKicks` per group and its watchdog process."""
        for group in sim.groups.values():
            kicks = SlowBatchKicks(sim, group)
            self.kicks[group.name] = kicks
            sim.env.process(kicks.watchdog())

    def on_slow_batch(self, group: ConsumerGroup, part: Partition, t: float) -> bool:
        """The group's kicks decide (:meth:`SlowBatchKicks.on_slow_batch`)."""
        return self.kicks[group.name].on_slow_batch(group, part, t)

    def contribute(self, sim: Simulation, result: SimulationResult) -> SimulationResult:
        """``members_kicked`` and a note on them."""
        kicked = sum(k.kicks for k in self.kicks.values())
        if not kicked:
            return amend(result, members_kicked=0)
        return amend(
            result,
            [
                f"{kicked} members kicked for batches over max.poll.interval.ms (each a leave "
                f"and a rejoin: two rebalances)"
            ],
            members_kicked=kicked,
        )


class SlowBatchKicks:
    """Kicks members whose batch outlasted ``max_poll_interval_ms`` (see the module docstring).

    :meth:`on_slow_batch` answers the group's slow-batch hook (the kick runs at the next sample
    time); :meth:`watchdog` is a SimPy process that kicks the members of batches still running
    too long. Counters: ``kicks`` (members kicked), ``slow_batches`` (batches noticed),
    ``looks`` (the watchdog's looks), ``rejoins`` (assignor passes the kicks ran).
    """

    batch = True
    """Members kicked at one look, when no rebalance is under way, leave and rejoin together: one
    assignor pass for all of them instead of one each. The results are the same (the tests and
    the golden set compare both ways); a storm of many members costs a pass per look."""

    sleep_while_gone = True
    """The watchdog sleeps while the group has no live member and no batch running, until a
    member joins again (``ConsumerGroup.on_join``), instead of looking once an interval: a look
    there cannot find anything, so the results are the same (the tests compare both ways)."""

    def __init__(self, sim: Simulation, group: ConsumerGroup):
        self.env = sim.env
        self.duration = sim.duration
        self.group = group
        self.pending: set[int] = set()
        """The members to kick at the next kick (a set: a storm has hundreds)."""
        self.requested = False
        self.kicks = 0
        self.slow_batches = 0
        self.looks = 0
        self.rejoins = 0

    def on_slow_batch(self, group: ConsumerGroup, part: Partition, t: float) -> bool:
        """The batch of ``part`` ended at ``t`` too late: its member is kicked at the next sample
        time (``ConsumerGroup.request_control``); returns True (its commit fails)."""
        member = part.owner
        if member < 0:
            return False
        self.slow_batches += 1
        self.pending.add(member)
        if not self.requested:
            self.requested = True
            at = group.request_control(t, self._kick_pending)
            if at <= self.duration:
                self.env.process(self._advance_to(at))
        return True

    def _advance_to(self, at: float) -> Generator[simpy.Event, Any, None]:
        """Bring the group to ``at`` (where its requested kick runs) if nothing else does."""
        if at > self.env.now:
            yield self.env.timeout(at - self.env.now)
        self.group.advance(at)

    def _kick_pending(self, now: float) -> None:
        """Kick every pending member at ``now``; the group is advanced to ``now``."""
        self.requested = False
        group = self.group
        members, self.pending = sorted(self.pending), set()
        kicked = [m for m in members if group.alive[m] and m not in group.stopping]
        if not kicked:
            return
        self.kicks += len(kicked)
        if len(kicked) == 1 or not self.batch or self._under_way():
            # One member, or a rebalance under way: one leave and rejoin at a time.
            for member in kicked:
                self._leave_and_rejoin(now, [member])
            return
        # No rebalance under way: the members rejoin together, one assignor pass for all of
        # them (each still counted as its own leave and rejoin, and as one member fewer for an
        # instant, as one at a time would give).
        live = group.alive.count(True) - sum(1 for i in group.stopping if group.alive[i])
        low = min(group.alive_min, live - 1)
        before = group.rebalances
        self._leave_and_rejoin(now, kicked)
        group.alive_min = low
        group.rebalances = before + (group.rebalances - before) * len(kicked)

    def _under_way(self) -> bool:
        """True while a rebalance is under way: an assignment pending, a partition waiting to be
        revoked or one parked (an owner gone, or not yet handed over)."""
        group = self.group
        return group.pending_target is not None or bool(group.revoke_wait) or bool(group.parked)

    def _leave_and_rejoin(self, now: float, members: list[int]) -> None:
        """``members`` leave the group at ``now`` and rejoin at once: one assignor pass."""
        self.rejoins += 1
        group = self.group
        group.crash(now, members)
        for member in members:
            group.incarnation[member] -= 1  # the same process: its memory survives a kick
        group.rebalances += 1  # it left the group
        group.restart(now, members)  # and rejoins on its next poll

    def watchdog(self) -> Generator[simpy.Event, Any, None]:
        """Kick the members of batches fetched more than ``max_poll_interval_ms`` ago and still
        running (checked every :data:`WATCHDOG_FRACTION` of the interval)."""
        env = self.env
        group = self.group
        interval = group.max_poll_interval_s
        period = interval * WATCHDOG_FRACTION
        busy_states = BUSY_STATES
        tick = env.now
        due = tick + interval
        back = -1.0  # looks before a gone group's members joined again find nothing
        while True:
            # Skip the looks that cannot find anything: every batch running at the last look was
            # fetched at or after ``due - interval``, and a batch fetched later is due later.
            tick += period
            while tick < due - DUE_SLACK_S and tick + period <= self.duration:
                tick += period
            if tick > self.duration:
                return
            if tick < back:
                due = tick + interval  # what that look would have set: nothing was running
                continue
            yield env.timeout(tick - env.now)
            self.looks += 1
            now = env.now
            group.advance(now)
            # A partition in a batch has its next action in the group's heap: look only at
            # those (none while the group is idle). When each batch running now was fetched; a
            # second pass only when one is overdue (the oldest is: ``now - fetched`` falls as
            # ``fetched`` grows).
            all_parts = group.parts
            parts = [all_parts[k & MASK] for k in group.heap]
            fetched = [q.batch_t for q in parts if q.state in busy_states and q.owner >= 0]
            oldest = min(fetched) if fetched else now
            overdue: set[int] = set()
            if now - oldest > interval:
                overdue = {
                    q.owner
                    for q in parts
                    if q.state in busy_states and q.owner >= 0 and now - q.batch_t > interval
                }
            elif oldest > now:
                oldest = now
            due = oldest + interval
            for member in sorted(overdue):
                if member not in self.pending:
                    self.slow_batches += 1
                    self.pending.add(member)
            if self.pending:
                self._kick_pending(now)
            elif self.sleep_while_gone and not fetched and True not in group.alive:
                # No member is live, so no batch runs until one joins again: sleep until then
                # instead of looking every interval (a paused group, hours long).
                back = yield self._join()

    def _join(self) -> simpy.Event:
        """An event that succeeds with the time (s) the next member of the group joins again."""
        joined = self.env.event()
        group = self.group

        def wake(t: float) -> None:
            group.on_join = None  # once: several members may join at the same time
            joined.succeed(float(t))

        group.on_join = wake
        return joined
