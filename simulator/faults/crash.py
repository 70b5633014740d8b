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
from simulator.engine.partition import ACTIVE, MASK
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
            yield from self._after_effect(sim, group, which, end)
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
        self, sim: Simulation, group: ConsumerGroup, members: list[int], end: float
    ) -> Generator[simpy.Event, Any, None]:
        """Each of ``members`` dies at the end of its next step (before ``end``): every
        :data:`IDLE_LOOK_S` the members with no step in progress look again (in member order,
        one pass for all of them). A member that finds one dies at its end (a process of its own
        that waits for it); one still without a step when the next look would pass ``end`` dies
        at once."""
        assert self.layers is not None
        env = sim.env
        pending = list(members)
        deaths: list[simpy.Process] = []
        while pending:
            group.advance(env.now)
            ends = step_ends(group, pending, env.now)
            last = env.now + IDLE_LOOK_S >= end
            if not ends and not last:
                yield env.timeout(IDLE_LOOK_S)
                continue
            waiting = []
            now_dying: list[int] = []
            for member in pending:
                at = ends.get(member)
                if at is None and not last:
                    waiting.append(member)
                    continue
                # The chosen step becomes a step in progress (an early-booked one too), so the
                # group stays short of its end until the crash.
                group.settle(env.now)
                at = env.now if at is None else at
                if at - COMMIT_LEAD_S > env.now:
                    deaths.append(env.process(self._die_at(sim, group, member, at)))
                elif at == env.now:
                    now_dying.append(member)
                else:  # its step ends within COMMIT_LEAD_S: it dies at that end
                    self.layers.on_crash(group, at, [member])
                    group.crash(at, [member])
            if now_dying:
                # Members with nothing in progress die together, now.
                self.layers.on_crash(group, env.now, now_dying)
                group.crash(env.now, now_dying)
            pending = waiting
            if pending:
                yield env.timeout(IDLE_LOOK_S)
        if deaths:
            yield simpy.AllOf(env, deaths)

    def _die_at(
        self, sim: Simulation, group: ConsumerGroup, member: int, at: float
    ) -> Generator[simpy.Event, Any, None]:
        """Member ``member`` dies at ``at``, the end of its step in progress: the group is
        brought to just before it (the step's effect written, its offset not committed)."""
        assert self.layers is not None
        env = sim.env
        before = at - COMMIT_LEAD_S
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


def step_ends(group: ConsumerGroup, members: list[int], t: float) -> dict[int, float]:
    """For each of ``members`` with a step in progress at ``t``: the seconds at which the first
    of them ends (its effect written, its offset not yet committed), at least ``t``. A step booked
    early (``early_f``: its completion recorded when it started, the group not settled) is in
    progress until its finish: reading it so leaves the group as it was (the caller settles the
    group when it acts on one). The candidates are the partitions with an action pending (a step
    in progress has its finish in the group's heap) and those with an early-booked finish after
    ``t``, so a look costs what is in flight, not every partition."""
    wanted = set(members)
    parts = group.parts
    early = group.early_f
    ends: dict[int, float] = {}
    candidates = {key & MASK for key in group.heap}
    if early and max(early) > t:
        candidates.update(p for p, f in enumerate(early) if f > t)
    for p in sorted(candidates):
        part = parts[p]
        owner = part.owner
        if owner not in wanted:
            continue
        f = early[p]
        if f > t:
            end = f
        elif part.state == ACTIVE and part.cur >= 0:
            end = part.busy_until
        else:
            continue
        if owner not in ends or end < ends[owner]:
            ends[owner] = end
    return {m: max(t, e) for m, e in ends.items()}


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
