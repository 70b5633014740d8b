"""``worker_crash``: members of a consumer group stop at ``at_seconds`` for ``duration_seconds``.

The crashed members abandon their steps in progress and commit nothing more
(``ConsumerGroup.crash``: what is redelivered, applied twice or lost). The coordinator notices
after ``session_timeout_ms`` (no heartbeat) and rebalances the survivors; when the members come
back they join and the group rebalances again. Just before the crash every fault layer hears of
it (``on_crash``: the checkpoint rework of :mod:`simulator.faults.checkpoint`).

``backlog_at_restart``: how many more of the group's events are due and unstarted when the members
come back than at the crash's ``at_seconds``, the largest over the scenario's crashes (None when
no crashed member came back inside the window; members an ``after_effect`` crash takes a moment
to reach start a few more events before they die). Every event that came due while the crashed
members were down (arrived in the log, or for causal runs due by the run's graph though its run
stalled, ``Simulation.due``) and that no survivor started: for a steady load of ``rate``
events/s that all go to the crashed members, exactly ``rate x outage`` (seed 000's lag
arithmetic). For a steady load ``backlog_peak`` is larger: the backlog keeps growing until the
restarted members have rejoined (a rebalance) and started again (with a random load the two also
differ by sampling and by the normal band ``backlog_peak`` subtracts).

With ``after_effect`` (the course's crash scenarios) the crash cannot land on a commit by chance:
each crashed member dies at the end of the first step it has in progress at ``at_seconds`` (within
one step time: about 2 s for an agent step), after that step's effect is written and before its
offset is committed (Kafka commits after processing, so a process killed between the two
redelivers a record whose effect is already applied). So every crashed member leaves at least one
completed but uncommitted record, whatever the seed or ``max_poll_records``; without dedupe its
effect is applied twice. Detection and restart are timed from ``at_seconds``.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import simpy

from simulator.engine.hooks import FaultLayer, Layers, amend
from simulator.engine.metrics import sig
from simulator.engine.partition import ACTIVE
from simulator.result import FaultWindow, SimulationResult
from simulator.scenario import WorkerCrash

if TYPE_CHECKING:
    from simulator.engine.consumers import ConsumerGroup
    from simulator.engine.run import Simulation
    from simulator.scenario import Fault


class WorkerCrashes(FaultLayer):
    """``worker_crash`` faults (see the module docstring)."""

    kinds = ("worker_crash",)

    def __init__(self) -> None:
        self.layers: Layers | None = None
        self.idle: list[float] = []
        """Per crash of some (not all) members: seconds until their partitions moved to the
        survivors (the session timeout's detection) or the members came back."""
        self.restarts: list[tuple[str, float, int, float, int]] = []
        """Per crash whose members came back in the window: ``(group, crash s, events started
        or given up by then, restart s, the same by then)``."""

    def install(self, sim: Simulation, layers: Layers) -> None:
        """Keep the simulation's layers, to tell them of each crash."""
        self.layers = layers

    def start(self, sim: Simulation, fault: Fault) -> Generator[simpy.Event, Any, None]:
        """SimPy process of a ``worker_crash``: crash, detection, restart."""
        assert isinstance(fault, WorkerCrash)
        assert self.layers is not None, "not installed"
        env = sim.env
        group = sim.groups[fault.group]
        count = (
            group.instances if fault.instances == "all" else min(fault.instances, group.instances)
        )
        which = list(range(count))
        yield env.timeout(fault.at_seconds)
        start = float(fault.at_seconds)
        end = start + fault.duration_seconds
        sim.fault_windows.append(FaultWindow(kind=fault.kind, start_s=start, end_s=end))
        group.advance(start)
        gone_at_crash = _started_or_gone(group)
        if fault.mid_batch and fault.after_effect:
            # Each member dies when its next step's effect is written, before the commit (a
            # member with no step in progress dies at the end of the next one it starts).
            group.settle(start)
            deaths = [env.process(self._after_effect(sim, group, i, end)) for i in which]
            yield simpy.AllOf(env, deaths)
        else:
            self.layers.on_crash(group, start, which)
            group.crash(start, which, mid_batch=fault.mid_batch)
        if count < group.instances:
            self.idle.append(min(group.session_timeout_s, fault.duration_seconds))
        env.process(_detect(sim, group, start + group.session_timeout_s, end))
        yield env.timeout(max(0.0, end - env.now))
        group.advance(end)
        self.restarts.append(
            (fault.group, start, gone_at_crash, float(end), _started_or_gone(group))
        )
        group.restart(end, which)

    def _after_effect(
        self, sim: Simulation, group: ConsumerGroup, member: int, end: float
    ) -> Generator[simpy.Event, Any, None]:
        """Member ``member`` dies at the end of its next step (before ``end``): looks every
        :data:`IDLE_LOOK_S` while it has none in progress."""
        assert self.layers is not None
        env = sim.env
        while True:
            group.advance(env.now)
            group.settle(env.now)
            at = next_effect_s(group, member, env.now)
            if at is not None or env.now + IDLE_LOOK_S >= end:
                break
            yield env.timeout(IDLE_LOOK_S)
        at = env.now if at is None else at
        before = at - COMMIT_LEAD_S
        if before > env.now:
            yield env.timeout(before - env.now)
            group.advance(before)
        self.layers.on_crash(group, at, [member])
        group.crash(at, [member])

    def contribute(self, sim: Simulation, result: SimulationResult) -> SimulationResult:
        """``backlog_at_restart``: the largest growth of a crashed group's backlog from its
        crash to its restart (left None when no crashed member came back in the window);
        ``orphaned_partitions_s``: the longest time a crash of some members left their partitions
        with no one working them (None when every crash took all members)."""
        if self.idle:
            result = amend(result, orphaned_partitions_s=sig(max(self.idle)))
        if not self.restarts:
            return result
        growth = max(
            (sim.due(name, up) - sim.due(name, down)) - (gone_up - gone_down)
            for name, down, gone_down, up, gone_up in self.restarts
        )
        return amend(result, backlog_at_restart=max(0, growth))


def _started_or_gone(group: ConsumerGroup) -> int:
    """Events of ``group`` started or given up so far (the group advanced to now)."""
    return group.started_first + group.never_started_gone


COMMIT_LEAD_S = 1e-6
"""An ``after_effect`` crash brings the group to this long before the chosen step's end, so the
step is still in progress (its commit not made) when the member dies at its end."""


IDLE_LOOK_S = 0.05
"""How often an ``after_effect`` crash looks again at a member with no step in progress."""


def next_effect_s(group: ConsumerGroup, member: int, t: float) -> float | None:
    """Seconds at which the first step ``member`` of ``group`` has in progress at ``t`` ends (its
    effect written; its offset not yet committed), or None when it has none in progress. The
    group must be settled at ``t`` (no early-completed step)."""
    ends = [
        part.busy_until
        for part in group.parts
        if part.owner == member and part.state == ACTIVE and part.cur >= 0
    ]
    return max(t, min(ends)) if ends else None


def _detect(
    sim: Simulation, group: ConsumerGroup, at: float, restart_at: float
) -> Generator[simpy.Event, Any, None]:
    """Session-timeout detection of dead members at ``at``: rebalance if membership changed."""
    env = sim.env
    if at >= restart_at:
        return
    # The session timeout runs from the crash; an after-effect crash that waited for a member's
    # step may already be past it.
    yield env.timeout(max(0.0, at - env.now))
    at = env.now
    group.advance(at)
    if group.membership_changed():
        group.rebalance(at)
