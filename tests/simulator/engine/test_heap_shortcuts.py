"""The shortcuts a rebalance storm takes through the consumer group's heap hold on real runs.

Two of them rely on the heap's invariant (``simulator.engine.partition``: a partition in a batch,
ACTIVE, RETRY or POLL, has its entry in the heap; a PARKED one has none):

- a crash or a rebalance takes only the entries of the partitions it parked out of the heap
  (``GroupState._drop_entries``) instead of rebuilding it from every partition;
- the slow-batch watchdog looks only at the partitions with an entry in the heap;
- a new assignment recounts the slots held from the heap's entries, and sets poll sizes only for
  the members whose size changed.

Here each is checked against the full pass over every partition, at every call, on the seeded
random crash cases of the invariants test (every assignment strategy, mid-batch and not) and on
rebalance storms of the course: the replay of a group of 96 partitions with a 1 s
``max.poll.interval.ms`` and a rolling deploy. Last, whole storms give the same result, to the
last field, with the watchdog's full scan and the heap rebuilt from every partition.
"""

from __future__ import annotations

import random
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest
import simpy
import yaml

from simulator import native, simulate
from simulator.design import Design
from simulator.engine.group import GroupState
from simulator.engine.partition import ACTIVE, MASK, PARKED, POLL, RETRY
from simulator.faults.rebalance import BUSY_STATES, DUE_SLACK_S, WATCHDOG_FRACTION, SlowBatchKicks
from simulator.files import load_design
from simulator.scenario import Scenario
from simulator.simulation import run_workload
from tests.simulator.test_invariants import random_case

STEPS = Path(__file__).resolve().parents[3] / "steps"
IN_BATCH = (ACTIVE, RETRY, POLL)

# The checks wrap the data plane's methods; compiled code calls them natively, past any wrapper,
# so where the suite runs compiled, tests/simulator/test_native.py runs this file on the source.
pytestmark = pytest.mark.skipif(
    native.state().compiled,
    reason="wraps the data plane's methods: run on the Python source by test_native.py",
)


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Check the heap against every partition after each ``_drop_entries`` and each
    ``advance`` (what the watchdog reads); yields the counts of checks made (drops, advances)."""
    counts = [0, 0]
    drop = GroupState._drop_entries

    def drop_checked(self: GroupState, keys: list[int]) -> None:
        assert set(keys) <= set(self.heap)  # every noted key is an entry (no fallback needed)
        drop(self, keys)
        counts[0] += 1
        assert sorted(self.heap) == sorted(self._heap_entries())
        assert not any(self.parts[k & MASK].state == PARKED for k in self.heap)

    from simulator.engine.consumers import ConsumerGroup

    advance = ConsumerGroup.advance

    def advance_checked(self: ConsumerGroup, until: float) -> None:
        advance(self, until)
        counts[1] += 1
        in_heap = {part.pid for part in (self.parts[k & MASK] for k in self.heap)}
        in_batch = {q.pid for q in self.parts if q.state in IN_BATCH and q.owner >= 0}
        assert in_batch <= in_heap

    from simulator.engine.membership import Membership

    apply = Membership._apply_assignment

    def apply_checked(self: Membership, resume_t: float, which: object) -> None:
        apply(self, resume_t, which)  # type: ignore[arg-type]
        owned = [self.assignment.count(i) for i in range(self.instances)]
        slots, records = self.slots_per_instance, self.max_poll_records
        for q in self.parts:
            if q.owner >= 0:
                assert q.bsize == max(1, records // max(1, min(owned[q.owner], slots)))
        held = [0] * self.instances
        for q in self.parts:
            if q.owner >= 0 and q.state in IN_BATCH:
                held[q.owner] += 1
        assert self.free_slots == [slots - n for n in held]

    monkeypatch.setattr(GroupState, "_drop_entries", drop_checked)
    monkeypatch.setattr(Membership, "_apply_assignment", apply_checked)
    monkeypatch.setattr(ConsumerGroup, "advance", advance_checked)
    yield counts


@pytest.mark.parametrize("case", range(12))
def test_random_crashes_keep_the_heap_current(checked: list[int], case: int) -> None:
    r = random.Random(7000 + case)
    commit, dedupe = r.choice(
        [("after_processing", "durable_same_transaction"), ("auto", "in_memory")]
    )
    design, scenario, workload = random_case(r, commit, dedupe)
    run_workload(design, scenario, workload, case)
    assert checked[0] > 0


def storm(scenario: str, poll_interval_ms: float) -> tuple[Design, Scenario]:
    """The reference with every group's ``max.poll.interval.ms`` at ``poll_interval_ms`` and a
    course scenario (``replay`` with a 20-minute pause: a backlog of about 840 events)."""
    design = load_design(STEPS / "designs" / "reference.yaml")
    for group in (design.consumers.agent, design.consumers.tool, design.consumers.state):
        group.max_poll_interval_ms = poll_interval_ms
    data = yaml.safe_load((STEPS / "scenarios" / f"{scenario}.yaml").read_text())
    if scenario == "replay":
        # A 20-minute pause instead of 48 hours: a backlog of about 840 events, worked off in
        # a storm of kicks in the 40 minutes after.
        data["faults"][0]["duration_seconds"] = 1_200
        data["duration_seconds"] = 3_600 + 1_200 + 2_400
    return design, Scenario.model_validate(data)


@pytest.mark.parametrize(
    ("scenario", "poll_interval_ms"), [("rolling-deploy", 300_000), ("replay", 1_000)]
)
def test_course_storms_keep_the_heap_current(
    checked: list[int], scenario: str, poll_interval_ms: float
) -> None:
    result = simulate(*storm(scenario, poll_interval_ms), 1)
    assert checked[0] > 0 and checked[1] > 0
    if scenario == "replay":
        assert result.metrics.members_kicked > 100


def full_scan_watchdog(self: SlowBatchKicks) -> Generator[simpy.Event, Any, None]:
    """The watchdog as it was before it looked only at heap entries: every partition, every
    look, and the data plane entered at every look."""
    env, group = self.env, self.group
    interval = group.max_poll_interval_s
    period = interval * WATCHDOG_FRACTION
    tick = env.now
    due = tick + interval
    while True:
        tick += period
        while tick < due - DUE_SLACK_S and tick + period <= self.duration:
            tick += period
        if tick > self.duration:
            return
        yield env.timeout(tick - env.now)
        now = env.now
        group.advance(now)
        overdue: set[int] = set()
        oldest = now
        for part in group.parts:
            if part.state in BUSY_STATES and part.owner >= 0:
                if now - part.batch_t > interval:
                    overdue.add(part.owner)
                oldest = min(oldest, part.batch_t)
        due = oldest + interval
        for member in sorted(overdue):
            if member not in self.pending:
                self.slow_batches += 1
                self.pending.add(member)
        if self.pending:
            self._kick_pending(now)


@pytest.mark.parametrize(("scenario", "poll_interval_ms"), [("replay", 1_000), ("replay", 1_500)])
def test_storm_results_are_those_of_the_full_passes(
    monkeypatch: pytest.MonkeyPatch, scenario: str, poll_interval_ms: float
) -> None:
    """The same storm with the watchdog's full scan and the heap rebuilt from every partition
    after each crash and rebalance gives the same result, to the last field."""
    design, loaded = storm(scenario, poll_interval_ms)
    fast = simulate(design, loaded, 3)
    assert fast.metrics.members_kicked > 100
    monkeypatch.setattr(SlowBatchKicks, "watchdog", full_scan_watchdog)
    monkeypatch.setattr(GroupState, "_drop_entries", lambda self, keys: self._rebuild_heap())
    full = simulate(design, loaded, 3)
    assert fast.model_dump() == full.model_dump()
