"""Step 9's no-rebalance-storm judges the replay scenario: the 48 h pause must leave a backlog
that fills a poll up to the largest max.poll.records the step's form accepts, at the reference's
partitions and share, so that a batch too big for max.poll.interval.ms is kicked in the run.

At 0.02 step events/s the pause left about 36 events a partition: no batch ever filled and a
design polling 10,000 records (833 a partition of the 12 a worker works at once, over 1,600 s of
2 s calls) passed against 300 s. At 0.7 events/s every partition holds at least 940."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import yaml

from app.sim_budget import check_size
from simulator import simulate
from simulator.engine import make_rngs
from simulator.engine.eventlog import partitions_of
from simulator.engine.workload import build_workload
from simulator.files import load_design, load_scenario
from simulator.scenario import ConsumerPause
from tests.course.conftest import STEPS_DIR

REPLAY = load_scenario(STEPS_DIR / "scenarios" / "replay.yaml")
REFERENCE = load_design(STEPS_DIR / "designs" / "reference.yaml")
BAD = STEPS_DIR / "designs" / "bad"


def _decision(field: str) -> dict[str, Any]:
    """Step 9's form decision of ``field`` (its ``min`` and ``max``)."""
    step = yaml.safe_load((STEPS_DIR / "09-worker-crash" / "step.yaml").read_text())
    (decision,) = [d for d in step["decisions"] if d["field"] == field]
    return dict(decision)


@pytest.mark.parametrize("seed", [1, 7, 20])
def test_every_partition_comes_back_to_a_full_poll_of_the_form_maximum(seed: int) -> None:
    """The events written until the group's return (all re-read from the earliest offset) on
    each of the reference's 96 partitions, against the form's largest max.poll.records shared by
    the 12 partitions a reference worker works at once."""
    agent = REFERENCE.consumers.agent
    share = min(
        -(-REFERENCE.event_log.partitions // agent.instances), agent.concurrency_per_instance
    )
    per_partition = int(_decision("consumers.agent.max_poll_records")["max"]) // share
    assert (share, per_partition) == (12, 833)
    load = build_workload(REFERENCE, REPLAY, make_rngs(seed)[0]).groups["agent"]
    pause = REPLAY.faults[0]
    assert isinstance(pause, ConsumerPause)
    back = pause.at_seconds + pause.duration_seconds
    counts = np.bincount(
        partitions_of(REFERENCE, load)[load.arrival_s < back],
        minlength=REFERENCE.event_log.partitions,
    )
    assert counts.min() >= 940 > per_partition


def test_the_reference_batches_stay_far_inside_the_interval_and_huge_polls_are_kicked() -> None:
    """The reference: 4 records a partition, its slowest batch about 31 s of 300 s. The known-bad
    10,000-record poll: 833 records a partition, kicked again and again at 300 s."""
    m = simulate(REFERENCE, REPLAY).metrics
    g = m.by_group["agent"]
    assert m.members_kicked == 0
    assert g.poll_records_max == 4
    assert g.poll_batch_max_s < 300 / 5
    huge = simulate(load_design(BAD / "huge-poll-batch.yaml"), REPLAY).metrics
    g = huge.by_group["agent"]
    assert g.poll_records_max == 833
    assert huge.members_kicked > 100
    assert 300 < g.poll_batch_max_s <= 330  # cut short by the kick (a watchdog look every 30 s)


def test_the_form_shortest_poll_interval_stays_within_the_simulation_budget() -> None:
    """A watchdog look every 0.1 s for the whole window plus the step events: under the
    2,000,000 simulated events one simulation may take, so the design is judged, not refused."""
    shortest_ms = _decision("consumers.agent.max_poll_interval_ms")["min"]
    assert shortest_ms == 1000
    agent = REFERENCE.consumers.agent.model_copy(update={"max_poll_interval_ms": shortest_ms})
    shortest = REFERENCE.model_copy(
        update={"consumers": REFERENCE.consumers.model_copy(update={"agent": agent})}
    )
    check_size(shortest, REPLAY, 2_000_000)
