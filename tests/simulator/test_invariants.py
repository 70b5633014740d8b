"""Invariants of the consumer-group model over many seeded random cases.

60 cases drawn from one seeded ``random.Random``: partitions, instances, concurrency,
max.poll.records, assignment strategy, step times, and one or two crashes of some or all members at
random times, mid-batch or between batches. Arrivals stop well before the window ends, so every
event must have been handled by then.

- Commit after processing + durable dedupe: nothing lost, no duplicate effect, every event
  processed exactly once (worked-numbers item 4's guarantee, generalised).
- Any commit mode: every event is processed, lost or still owed; redelivered records never exceed
  what was fetched, and duplicates never exceed redeliveries.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from simulator.design import Design
from simulator.engine import Workload
from simulator.scenario import Scenario
from simulator.simulation import run_workload

UNLIMITED_MODEL = {"rpm": 1_000_000, "tpm": 10_000_000_000, "max_concurrency": 10_000}


def random_case(r: random.Random, commit: str, dedupe: str) -> tuple[Design, Scenario, Workload]:
    partitions = r.choice([1, 3, 8, 16])
    instances = r.randint(1, 4)
    design = Design.model_validate(
        {
            "event_log": {"partitions": partitions, "partition_key": "event_id"},
            "delivery": {"commit": commit, "dedupe": dedupe, "auto_commit_interval_ms": 700},
            "consumers": {
                "agent": {
                    "instances": instances,
                    "concurrency_per_instance": r.randint(1, 6),
                    "max_poll_records": r.choice([1, 3, 10, 50]),
                    "session_timeout_ms": r.choice([6_000, 10_000]),
                    "assignment": r.choice(["range", "round_robin", "cooperative_sticky"]),
                }
            },
            "model": {"primary": UNLIMITED_MODEL},
        }
    )
    rate = r.uniform(1.0, 8.0)
    n = int(rate * 120)
    arrivals = sorted(r.uniform(0, 120) for _ in range(n))
    steps = [r.uniform(0.05, 1.5) for _ in range(n)]
    faults: list[dict[str, Any]] = []
    for _ in range(r.randint(1, 2)):
        who: int | str = "all" if r.random() < 0.5 else r.randint(1, instances)
        faults.append(
            {
                "kind": "worker_crash",
                "at_seconds": round(r.uniform(5, 110), 3),
                "duration_seconds": round(r.uniform(1, 30), 3),
                "instances": who,
                "mid_batch": r.random() < 0.7,
            }
        )
    scenario = Scenario.model_validate({"name": "random", "faults": faults})
    return design, scenario, Workload.from_arrays(3000.0, agent=(arrivals, steps))


@pytest.mark.parametrize("case", range(30))
def test_commit_after_with_durable_dedupe_never_loses_nor_duplicates(case: int) -> None:
    r = random.Random(1000 + case)
    design, scenario, workload = random_case(r, "after_processing", "durable_same_transaction")
    m = run_workload(design, scenario, workload, case).metrics
    assert m.lost == 0
    assert m.duplicate_effects == 0
    assert m.processed == m.arrivals
    assert m.dedupe_skipped <= m.redelivered


@pytest.mark.parametrize("case", range(30))
@pytest.mark.parametrize(
    ("commit", "dedupe"),
    [("before_processing", "none"), ("auto", "in_memory"), ("after_processing", "none")],
)
def test_every_event_is_processed_or_lost(case: int, commit: str, dedupe: str) -> None:
    r = random.Random(5000 + case)
    design, scenario, workload = random_case(r, commit, dedupe)
    m = run_workload(design, scenario, workload, case).metrics
    assert m.processed + m.lost == m.arrivals
    assert m.duplicate_effects + m.dedupe_skipped <= m.redelivered
    if commit == "after_processing":
        assert m.lost == 0
