"""``worker_crash``: members of a consumer group stop at ``at_seconds`` for ``duration_seconds``.

The crashed members abandon their steps in progress and commit nothing more
(``ConsumerGroup.crash``: what is redelivered, applied twice or lost). The coordinator notices
after ``session_timeout_ms`` (no heartbeat) and rebalances the survivors; when the members come
back they join and the group rebalances again. Just before the crash every fault layer hears of
it (``on_crash``: the checkpoint rework of :mod:`simulator.faults.checkpoint`).

``backlog_at_restart``: how many more of the group's events wait unstarted when the members come
back than just after they crashed, the largest over the scenario's crashes (None when no crashed
member came back inside the window). Every event that arrived while the crashed members were down
and that no survivor started: for a steady load of ``rate`` events/s that all go to the crashed
members, exactly ``rate x outage`` (seed 000's lag arithmetic). For a steady load
``backlog_peak`` is larger: the backlog keeps growing until the restarted members have rejoined
(a rebalance) and started again (with a random load the two also differ by sampling and by the
normal level ``backlog_peak`` subtracts).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import simpy

from simulator.engine.hooks import FaultLayer, Layers, amend
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
        self.backlog_at_restart: list[int] = []
        """Per crash whose members came back in the window: the backlog's growth, events."""

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
        self.layers.on_crash(group, start, which)
        group.crash(start, which, mid_batch=fault.mid_batch)
        waiting_at_crash = _unstarted(sim, fault.group, start)
        env.process(_detect(sim, group, start + group.session_timeout_s, end))
        yield env.timeout(fault.duration_seconds)
        group.advance(end)
        growth = _unstarted(sim, fault.group, end) - waiting_at_crash
        self.backlog_at_restart.append(max(0, growth))
        group.restart(end, which)

    def contribute(self, sim: Simulation, result: SimulationResult) -> SimulationResult:
        """``backlog_at_restart``: the largest growth of a crashed group's backlog from its
        crash to its restart (left None when no crashed member came back in the window)."""
        if not self.backlog_at_restart:
            return result
        return amend(result, backlog_at_restart=max(self.backlog_at_restart))


def _unstarted(sim: Simulation, group_name: str, t: float) -> int:
    """Events of ``group_name`` that arrived by ``t`` and had neither started nor been given up
    (the group must have been advanced to ``t``): its backlog at ``t``."""
    group = sim.groups[group_name]
    return sim.topics[group_name].log_end(t) - group.started_first - group.never_started_gone


def _detect(
    sim: Simulation, group: ConsumerGroup, at: float, restart_at: float
) -> Generator[simpy.Event, Any, None]:
    """Session-timeout detection of dead members at ``at``: rebalance if membership changed."""
    env = sim.env
    if at >= restart_at:
        return
    yield env.timeout(at - env.now)
    group.advance(at)
    if group.membership_changed():
        group.rebalance(at)
