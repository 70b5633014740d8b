"""``flaky``: a fraction of a group's events fail with an unclassified error that soon clears.

A tool or model call that times out, or answers with a generic 5xx, usually goes through when
tried again a moment later; at its first failure the consumer cannot tell it from a poison event.
So these failures count toward ``failures.retry.max_attempts`` and are retried with the group's
backoff (:func:`simulator.engine.provider.backoff_seconds` under ``failures.retry``, with the
design's jitter). Each flaky event's failure lasts ``c`` seconds after its first attempt, ``c``
drawn uniformly from ``[clears_after_min_seconds, clears_after_max_seconds]``: an attempt made
``c`` or more after the first goes through (counted in ``flaky_recovered``); when every attempt
comes sooner the event is given up like a poison event (parked on the dead-letter topic, with its
key quarantined under ``failures.quarantine_per_key``, or dropped and lost) although a retry
would have gone through (``flaky_given_up``). A failed attempt, like a poison event's, fails at
once (its time is not counted) and calls no model.

Which events are flaky, and their ``c``, come from a generator of their own
(``Simulation.fault_rng``), and so does the jitter of their retries: every other draw of a run
(the workload, the poison events, every other retry) is the same as without them, and a scenario
without a ``flaky`` fault gives byte-identical results. A poison event is never flaky (poison
wins when both draws pick it).

**The course's figures** (the ``poison`` scenario: 1 agent event in 100 flaky, ``c`` uniform in
0.2-1.0 s). The bounds stand for a call retried onto a healthy replica or connection: a second
or less, while the shortest, 0.2 s, is longer than a retry loop with no backoff spends (the
engine's floor of 0.01 s a wait, 0.05 s for five retries), and the longest, 1 s, is the
reference's first backoff before jitter. With ``n`` attempts the event is given up when the
``n - 1`` waits ``W1 .. W(n-1)`` add up to less than ``c``; ``Wi`` is uniform in
``[0, b x 2**(i-1)]`` with full jitter (base ``b``, capped at ``max_backoff_seconds``):

- the reference (6 attempts, ``b`` 1 s, cap 16 s, full jitter): all five waits must fit in
  ``c <= 1`` s, ``P = E[c**5] / (5! x 1 x 2 x 4 x 8 x 16) = 0.2083 / 122,880 = 1.7e-6`` per flaky
  event; with about 45 flaky events met per run, a run gives any up with probability 8e-5, and
  three or more (over the check's 5 % of 45) with about 1e-13;
- no jitter (``W1`` = 1 s >= ``c``), or equal jitter with 3 attempts or more (``W1 + W2 >= 1.5``
  s): never given up;
- ``max_attempts`` 1: every flaky event is given up at its first failure (100 %);
- ``base_backoff_seconds`` 0: five waits of 0.01 s, 0.05 s in all, under the 0.2 s minimum: every
  flaky event is given up (100 %);
- in between, with ``b`` 1 s and full jitter: 2 attempts give up ``E[c] = 60 %``, 3 attempts
  ``E[c**2] / 4 = 10 %``, 4 attempts ``E[c**3] / 48 = 0.65 %``.

A scenario needs at least one met flaky event for the check to be exercised: at about 45 expected
per run, none at all has probability ``e**-45``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

from simulator.engine.partition import ASK, PARK
from simulator.engine.provider import backoff_seconds
from simulator.scenario import Flaky

if TYPE_CHECKING:
    from simulator.engine.consumers import ConsumerGroup
    from simulator.engine.partition import Partition
    from simulator.engine.run import Simulation


class PoisonState(Protocol):
    """What this module reads and writes of a group's poison and flaky events (the poison
    layer's :class:`simulator.faults.poison.PoisonState`; named here without importing it, as
    the poison layer imports this module)."""

    flaky: dict[tuple[int, int], FlakyEvent]
    flaky_rng: random.Random | None
    parked_keys: set[tuple[int, int]]
    quarantined: int


@dataclass
class FlakyEvent:
    """One flaky event: how long its failure lasts after its first attempt (``clears_after_s``),
    when that first attempt was made (None: never met), and what became of it (``recovered_s``:
    when an attempt went through; ``given_up_s``: when it was given up, ``parked`` then)."""

    clears_after_s: float
    first_attempt_s: float | None = None
    failed_attempts: int = 0
    recovered_s: float | None = None
    given_up_s: float | None = None
    parked: bool = False


def start_flaky(sim: Simulation, group: ConsumerGroup, state: PoisonState, fault: Flaky) -> None:
    """Mark ``fault``'s flaky events of ``group`` at time 0 (as they reach the log, in a causal
    run): each event is flaky with probability ``rate`` (one draw per event, in order, from a
    generator seeded from ``sim.fault_rng``), its failure's duration drawn uniformly from the
    fault's bounds (one draw per flaky event, in order)."""
    gen = np.random.Generator(np.random.PCG64(sim.fault_rng.getrandbits(64)))
    if state.flaky_rng is None:
        state.flaky_rng = random.Random(sim.fault_rng.getrandbits(64))
    lo, hi = fault.clears_after_min_seconds, fault.clears_after_max_seconds
    if sim.world is not None and sim.graph is not None:
        _mark_as_produced(sim, group, state, fault, gen)
        return
    topic = sim.topics[fault.group]
    chosen = (gen.random(topic.arrival_s.size) < fault.rate) & (topic.arrival_s >= fault.at_seconds)
    rows = np.nonzero(chosen)[0]
    clears = gen.uniform(lo, hi, rows.size)
    if not rows.size:
        return
    parts = np.searchsorted(topic.start, rows, side="right") - 1
    for row, p, c in zip(rows.tolist(), parts.tolist(), clears.tolist(), strict=True):
        part = group.parts[p]
        offset = row - int(topic.start[p])
        if part.fail_attempts is None:
            part.fail_attempts = {}
        if offset not in part.fail_attempts:  # a poison event is not flaky
            part.fail_attempts[offset] = ASK
            state.flaky[(p, offset)] = FlakyEvent(float(c))


def _mark_as_produced(
    sim: Simulation,
    group: ConsumerGroup,
    state: PoisonState,
    fault: Flaky,
    gen: np.random.Generator,
) -> None:
    """Causal runs: one draw per event of the run graph (in event order) decides which of the
    group's events are flaky; each is marked as it reaches the log at or after ``at_seconds``,
    unless it is poison or parked behind its key (quarantine), which this hook also applies for
    a key whose flaky event was parked."""
    graph = sim.graph
    world = sim.world
    assert graph is not None and world is not None
    kind = ("agent", "tool", "state").index(group.name)
    draws = gen.random(graph.events)
    events = np.nonzero((draws < fault.rate) & (graph.kind == kind))[0]
    clears = gen.uniform(
        fault.clears_after_min_seconds, fault.clears_after_max_seconds, events.size
    )
    flaky = dict(zip(events.tolist(), clears.tolist(), strict=True))
    keys = sim.event_keys
    at = float(fault.at_seconds)

    def on_append(g: object, part: Partition, offset: int, event: int, t: float) -> None:
        if g is not group:
            return
        fails = part.fail_attempts
        if fails is not None and offset in fails:
            return  # poison, or parked by a poison event's quarantine
        if state.parked_keys and (part.pid, int(keys[event])) in state.parked_keys:
            if part.fail_attempts is None:
                part.fail_attempts = {}
            part.fail_attempts[offset] = PARK
            state.quarantined += 1
        elif event in flaky and t >= at:
            if part.fail_attempts is None:
                part.fail_attempts = {}
            part.fail_attempts[offset] = ASK
            state.flaky[(part.pid, offset)] = FlakyEvent(flaky[event])

    world.delivery_hooks.append(on_append)


def failed_attempt(
    state: PoisonState, group: ConsumerGroup, part: Partition, pos: int, t: float
) -> float:
    """An attempt at ``t`` of the flaky event at ``pos`` of ``part``: -1 when it goes through
    (its failure has cleared), else the seconds to the next attempt (``backoff_seconds`` under
    ``failures.retry`` for the failure this one makes, jittered from the flaky events' own
    generator; 0 when this failure reaches the attempt limit and the event is given up)."""
    event = state.flaky.get((part.pid, pos))
    if event is None:
        return -1.0
    if event.first_attempt_s is None:
        event.first_attempt_s = t
    if t >= event.first_attempt_s + event.clears_after_s:
        if event.recovered_s is None and event.failed_attempts:
            event.recovered_s = t
        if part.fail_attempts is not None:
            part.fail_attempts.pop(pos, None)
        return -1.0
    event.failed_attempts += 1
    policy = group.failure_policy
    failures = part.failures + 1
    if policy.max_attempts is not None and failures >= policy.max_attempts:
        return 0.0
    assert state.flaky_rng is not None
    return backoff_seconds(policy, failures, state.flaky_rng)


def flaky_given_up(state: PoisonState, part: Partition, pos: int, t: float, parked: bool) -> bool:
    """Offset ``pos`` of ``part`` was given up at ``t``: True when it was a flaky event that had
    been attempted (its record is updated and its mark removed, so a redelivery runs it)."""
    event = state.flaky.get((part.pid, pos))
    if event is None or event.first_attempt_s is None or event.recovered_s is not None:
        return False
    event.given_up_s = t
    event.parked = parked
    if part.fail_attempts is not None and part.fail_attempts.get(pos) == ASK:
        del part.fail_attempts[pos]
    return True


def flaky_figures(states: list[PoisonState]) -> dict[str, float | None]:
    """The result's flaky metrics over ``states`` (see ``simulator.result.Metrics``): events
    met, recovered, given up, the longest retry of a given-up one and the longest failure met,
    seconds. Empty when no state has flaky events."""
    if not any(s.flaky_rng is not None for s in states):
        return {}
    met = [e for s in states for e in s.flaky.values() if e.first_attempt_s is not None]
    after = [
        e.given_up_s - e.first_attempt_s
        for e in met
        if e.given_up_s is not None and e.first_attempt_s is not None
    ]
    return {
        "flaky_events": len(met),
        "flaky_recovered": sum(1 for e in met if e.recovered_s is not None),
        "flaky_given_up": len(after),
        "flaky_given_up_after_max_s": max(after) if after else None,
        "flaky_clear_max_s": max(e.clears_after_s for e in met) if met else None,
    }
