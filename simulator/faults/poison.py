"""``poison``: a fraction of a group's events fail on every attempt (worked-numbers item 8).

Which events are poison: each event of the group arriving at or after ``at_seconds`` is poison
with probability ``rate``, drawn from a generator seeded from the run's seed. A poison event fails
at once on every attempt (attempt time is not counted), and the consumer retries it in place under
``failures.retry``: it holds its partition for the sum of the backoffs (1 + 2 + 4 + 8 + 16 = 31 s
for six attempts, no jitter), while the partition's arrivals queue behind it (about 12.9 at 20
events/s over 48 partitions). Then:

- with a dead-letter queue it is parked there (``dead_lettered``) and the partition moves on;
- without one it is dropped (``lost``);
- with no retry limit it is retried for ever and the partition never moves again.

Per-key order: once an event is parked, the later events of the same key on its partition would
be applied before it (it comes back from the dead-letter queue later). With
``failures.quarantine_per_key`` they are parked behind it instead (counted in ``dead_lettered``),
keeping the key's order; without it each one applied counts in ``order_violations``.

Each stall is a fault window (from the partition reaching the event to giving it up, or the end of
the window when it never does), so ``drain_seconds`` measures recovery after the last stall.

The same layer simulates ``flaky`` faults (:mod:`simulator.faults.flaky`: an unclassified error
that clears after a short time): a flaky event given up is parked or dropped like a poison event,
its key quarantined or its later events counted in ``order_violations`` the same way.
"""

from __future__ import annotations

import random
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import simpy

from simulator.engine.hooks import FaultLayer, Layers, amend
from simulator.engine.metrics import sig
from simulator.engine.partition import EVERY_ATTEMPT, PARK
from simulator.faults.flaky import (
    FlakyEvent,
    failed_attempt,
    flaky_figures,
    flaky_given_up,
    start_flaky,
)
from simulator.result import FaultWindow, SimulationResult
from simulator.scenario import Flaky, Poison

if TYPE_CHECKING:
    from simulator.engine.consumers import ConsumerGroup
    from simulator.engine.eventlog import Topic
    from simulator.engine.partition import Partition
    from simulator.engine.run import Simulation
    from simulator.scenario import Fault


@dataclass
class Stall:
    """One poison event: partition, offset, when its partition reached it and when it was given up
    (``None``: never), and the events queued behind it then."""

    partition: int
    offset: int
    reached_s: float
    given_up_s: float | None = None
    behind: int = 0
    parked: bool = False

    @property
    def seconds(self) -> float | None:
        """How long the event held its partition, or None when it never let go."""
        return None if self.given_up_s is None else self.given_up_s - self.reached_s


@dataclass
class PoisonState:
    """The poison and flaky events of one group and what became of them (``has_poison``: the
    group has a poison fault; ``flaky``: its flaky events by (partition, offset), ``flaky_rng``
    the jitter of their retries, None without a flaky fault)."""

    group: str
    quarantine: bool
    has_poison: bool = False
    poison: dict[tuple[int, int], Stall] = field(default_factory=dict)
    flaky: dict[tuple[int, int], FlakyEvent] = field(default_factory=dict)
    flaky_rng: random.Random | None = None
    given_up: dict[int, tuple[int, float]] = field(default_factory=dict)
    marked: int = 0
    quarantined: int = 0
    order_violations: int = 0
    # Causal runs: (partition, key code) whose later events are parked as they arrive.
    parked_keys: set[tuple[int, int]] = field(default_factory=set)


class PoisonEvents(FaultLayer):
    """``poison`` and ``flaky`` faults (see the module docstring): ``states``, one
    :class:`PoisonState` per group with either (by group name). Contributes
    ``order_violations``, the ``poison_*`` and ``flaky_*`` metrics and a note per group."""

    kinds = ("poison", "flaky")

    def __init__(self) -> None:
        self.states: dict[str, PoisonState] = {}
        self.sim: Simulation | None = None

    def install(self, sim: Simulation, layers: Layers) -> None:
        """Keep the simulation: a stall that ends adds its fault window."""
        self.sim = sim

    def start(self, sim: Simulation, fault: Fault) -> Generator[simpy.Event, Any, None]:
        """SimPy process of a ``poison`` or ``flaky`` fault: marks its events at time 0."""
        assert isinstance(fault, Poison | Flaky)
        group = sim.groups[fault.group]
        state = self._state(sim, group)
        if isinstance(fault, Flaky):
            start_flaky(sim, group, state, fault)
            return
        state.has_poison = True
        topic = sim.topics[fault.group]
        rng = np.random.Generator(np.random.PCG64(group.rng.getrandbits(64)))
        if sim.world is not None and sim.graph is not None:
            _mark_as_produced(sim, group, state, fault, rng)
            return
        chosen = (rng.random(topic.arrival_s.size) < fault.rate) & (
            topic.arrival_s >= fault.at_seconds
        )
        rows = np.nonzero(chosen)[0]
        if rows.size:
            parts = np.searchsorted(topic.start, rows, side="right") - 1
            for row, p in zip(rows.tolist(), parts.tolist(), strict=True):
                part = group.parts[p]
                offset = row - int(topic.start[p])
                if part.fail_attempts is None:
                    part.fail_attempts = {}
                part.fail_attempts[offset] = EVERY_ATTEMPT
                state.poison[(p, offset)] = Stall(p, offset, float("nan"))
        state.marked += int(rows.size)
        return
        yield  # a process that acts at time 0 only

    def _state(self, sim: Simulation, group: ConsumerGroup) -> PoisonState:
        if group.name not in self.states:
            self.states[group.name] = PoisonState(
                group.name, sim.design.failures.quarantine_per_key
            )
        return self.states[group.name]

    def failed_attempt(self, group: ConsumerGroup, part: Partition, pos: int, t: float) -> float:
        """An attempt of a flaky event (:func:`simulator.faults.flaky.failed_attempt`)."""
        state = self.states.get(group.name)
        if state is None:
            return -1.0
        return failed_attempt(state, group, part, pos, t)

    def on_give_up(
        self, group: ConsumerGroup, part: Partition, pos: int, t: float, dead_lettered: bool
    ) -> None:
        """An event of a group with poison or flaky events was given up: end its stall (and
        park the later events of its key, with ``quarantine_per_key``)."""
        state = self.states.get(group.name)
        if state is not None and self.sim is not None:
            _given_up(self.sim, state, group, part, pos, t, dead_lettered)

    def finish(self, sim: Simulation) -> None:
        """Windows of stalls that never ended, and order violations (:func:`finish`)."""
        finish(sim, self.states)

    def contribute(self, sim: Simulation, result: SimulationResult) -> SimulationResult:
        """``order_violations`` and a note per group with poison."""
        states = self.states
        if not states:
            return result
        notes: list[str] = []
        for s in states.values():
            if s.flaky_rng is not None:
                met = [e for e in s.flaky.values() if e.first_attempt_s is not None]
                notes.append(
                    f"flaky events in {s.group}: {len(met)} met, "
                    f"{sum(1 for e in met if e.recovered_s is not None)} went through on a retry, "
                    f"{sum(1 for e in met if e.given_up_s is not None)} given up"
                )
            if not s.has_poison:
                continue
            done = [x.seconds for x in s.poison.values() if x.seconds is not None]
            stuck = sum(1 for x in s.poison.values() if x.given_up_s is None and x.behind)
            mean = sum(done) / len(done) if done else 0.0
            notes.append(
                f"poison in {s.group}: {s.marked} events, {len(done)} given up after a mean stall "
                f"of {mean:.1f} s, {stuck} still stalling; {s.quarantined} parked behind their key"
            )
        violations = sum(s.order_violations for s in states.values())
        figures: dict[str, float | None] = {
            key: sig(value) if isinstance(value, float) else value
            for key, value in flaky_figures(list(states.values())).items()
        }
        if not any(s.has_poison for s in states.values()):
            return amend(
                result,
                notes,
                order_violations=result.metrics.order_violations + violations,
                **figures,
            )
        stalls = [x for s in states.values() for x in s.poison.values()]
        holding = [
            x for x in stalls if x.seconds is None and x.behind and x.reached_s <= sim.duration
        ]
        held = [x.seconds for x in stalls if x.seconds is not None]
        held += [sim.duration - x.reached_s for x in holding]
        given_up = [x for x in stalls if x.given_up_s is not None]
        return amend(
            result,
            notes,
            order_violations=result.metrics.order_violations + violations,
            poison_stall_max_s=sig(max(held)) if held else 0.0,
            poison_still_holding=len(holding),
            poison_given_up=len(given_up),
            poison_dropped=sum(1 for x in given_up if not x.parked),
            **figures,
        )


def _given_up(
    sim: Simulation,
    state: PoisonState,
    group: ConsumerGroup,
    part: Partition,
    pos: int,
    t: float,
    parked: bool,
) -> None:
    """Offset ``pos`` of ``part`` was given up at ``t``: if it was poison, its stall ends."""
    previous = state.given_up.get(part.pid)
    state.given_up[part.pid] = (pos, t)
    stall = state.poison.get((part.pid, pos))
    if stall is None:
        flaky = bool(state.flaky) and flaky_given_up(state, part, pos, t, parked)
        if flaky and parked and state.quarantine:
            _quarantine(sim, state, group, part, pos)
        return
    stall.given_up_s = t
    stall.parked = parked
    stall.reached_s = _reached(part, pos, previous)
    stall.behind = part.log_end(t) - (pos + 1)
    sim.fault_windows.append(FaultWindow(kind="poison", start_s=stall.reached_s, end_s=t))
    if parked and state.quarantine:
        _quarantine(sim, state, group, part, pos)


def _quarantine(
    sim: Simulation, state: PoisonState, group: ConsumerGroup, part: Partition, pos: int
) -> None:
    """Offset ``pos`` of ``part`` was parked: park the later events of its key behind it (as
    they reach the log, in a causal run)."""
    keys = sim.partition_keys(group.name, part)
    if sim.world is not None:
        state.parked_keys.add((part.pid, int(keys[pos])))
    later = np.nonzero(keys[pos + 1 :] == keys[pos])[0] + pos + 1
    if part.fail_attempts is None:
        part.fail_attempts = {}
    for offset in later.tolist():
        if part.fail_attempts.get(offset) != PARK:
            part.fail_attempts[offset] = PARK
            state.quarantined += 1


def _reached(part: Partition, pos: int, previous: tuple[int, float] | None = None) -> float:
    """When the partition's consumer reached offset ``pos``: its arrival, or when the offset
    before it finished or was given up (``previous``: the partition's last give-up), if later."""
    reached = part.arrival[pos]
    if pos > 0:
        before = part.first_finish[pos - 1]
        if before == before and before > reached:  # not NaN
            reached = before
        if previous is not None and previous[0] == pos - 1 and previous[1] > reached:
            reached = previous[1]
    return reached


def finish(sim: Simulation, states: dict[str, PoisonState]) -> None:
    """Before the result: windows of stalls that never ended, and order violations (``states``:
    by group name)."""
    for name, state in states.items():
        group = sim.groups[name]
        topic = sim.topics[name]
        for (p, offset), stall in state.poison.items():
            part = group.parts[p]
            if stall.given_up_s is None:
                if part.pos != offset or offset < part.hw:
                    continue  # never reached, or processed after all
                stall.reached_s = _reached(part, offset, state.given_up.get(p))
                stall.behind = part.log_end(sim.duration) - (offset + 1)
                sim.fault_windows.append(
                    FaultWindow(kind="poison", start_s=stall.reached_s, end_s=sim.duration)
                )
                continue
            if state.quarantine or not group.dlq:
                continue
            state.order_violations += _applied_after(topic, part, offset)
        if state.quarantine or not group.dlq:
            continue
        for (p, offset), event in state.flaky.items():
            if event.given_up_s is not None:
                state.order_violations += _applied_after(topic, group.parts[p], offset)


def _applied_after(topic: Topic, part: Partition, offset: int) -> int:
    """Later events of the key of ``part``'s parked ``offset`` that were applied (each applied
    ahead of it: it comes back from the dead-letter topic later)."""
    lo = int(topic.start[part.pid])
    keys = topic.key[lo : lo + part.n]
    finishes = np.asarray(part.first_finish[offset + 1 :], dtype=np.float64)
    same = keys[offset + 1 :] == keys[offset]
    return int(np.count_nonzero(same & np.isfinite(finishes)))


def _mark_as_produced(
    sim: Simulation,
    group: ConsumerGroup,
    state: PoisonState,
    fault: Poison,
    rng: np.random.Generator,
) -> None:
    """Causal runs: each event of the group is poison with probability ``rate`` (one draw per
    event of the run graph, in event order), marked as it reaches the log at or after
    ``at_seconds``; with quarantine, a parked event's later events of its key are parked as they
    arrive."""
    graph = sim.graph
    world = sim.world
    assert graph is not None and world is not None
    kind = ("agent", "tool", "state").index(group.name)
    draws = rng.random(graph.events)
    poison = set(np.nonzero((draws < fault.rate) & (graph.kind == kind))[0].tolist())
    keys = sim.event_keys
    at = float(fault.at_seconds)

    def on_append(g: object, part: Partition, offset: int, event: int, t: float) -> None:
        if g is not group:
            return
        if event in poison and t >= at:
            if part.fail_attempts is None:
                part.fail_attempts = {}
            part.fail_attempts[offset] = EVERY_ATTEMPT
            state.poison[(part.pid, offset)] = Stall(part.pid, offset, float("nan"))
            state.marked += 1
        elif state.parked_keys and (part.pid, int(keys[event])) in state.parked_keys:
            if part.fail_attempts is None:
                part.fail_attempts = {}
            part.fail_attempts[offset] = PARK
            state.quarantined += 1

    world.delivery_hooks.append(on_append)
