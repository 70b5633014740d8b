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
``max.poll.interval.ms`` and a rolling deploy.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from simulator import simulate
from simulator.engine.group import GroupState
from simulator.engine.partition import ACTIVE, MASK, PARKED, POLL, RETRY
from simulator.files import load_design
from simulator.scenario import Scenario
from simulator.simulation import run_workload
from tests.simulator.test_invariants import random_case

STEPS = Path(__file__).resolve().parents[3] / "steps"
IN_BATCH = (ACTIVE, RETRY, POLL)


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


@pytest.mark.parametrize(
    ("scenario", "poll_interval_ms"), [("rolling-deploy", 300_000), ("replay", 1_000)]
)
def test_course_storms_keep_the_heap_current(
    checked: list[int], scenario: str, poll_interval_ms: float
) -> None:
    design = load_design(STEPS / "designs" / "reference.yaml")
    for group in (design.consumers.agent, design.consumers.tool, design.consumers.state):
        group.max_poll_interval_ms = poll_interval_ms
    data = yaml.safe_load((STEPS / "scenarios" / f"{scenario}.yaml").read_text())
    if scenario == "replay":
        # A 20-minute pause instead of 48 hours: a backlog of about 840 events, worked off in
        # a storm of kicks in the 40 minutes after.
        data["faults"][0]["duration_seconds"] = 1_200
        data["duration_seconds"] = 3_600 + 1_200 + 2_400
    result = simulate(design, Scenario.model_validate(data), 1)
    assert checked[0] > 0 and checked[1] > 0
    if scenario == "replay":
        assert result.metrics.members_kicked > 100
