"""A fixture course for the learner's path: the three-step fixture course whose step 2 decides
and checks too, simulating a worker crash, so a test sees failed and passed checks, the four
fault figures and a step that must be re-run after an earlier change."""

from __future__ import annotations

from pathlib import Path

from tests.factories import write, write_course

CRASH_STEP = """\
id: event-log
title: The event log
summary: Size the log and survive a crash.
scenario: crash
decisions:
  - field: event_log.partitions
    label: Partitions
    widget: number
    unit: partitions
    min: 1
    max: 256
  - field: delivery.dedupe
    label: Dedupe
    widget: radio
    choices:
      - {value: none, label: None}
      - {value: in_memory, label: In memory}
      - {value: durable_same_transaction, label: "Durable, same transaction"}
checks:
  - id: enough-partitions
    title: At least 24 partitions
    points: 3
    expr: design.event_log.partitions >= 24
    pass: Enough partitions.
    fail: Too few partitions for the peak.
    explain: "{{ design.event_log.partitions }} partitions, 24 needed"
    hint: Add partitions.
    concept: partitions
  - id: durable-dedupe
    title: Dedupe survives the crash
    points: 2
    expr: design.delivery.dedupe == "durable_same_transaction"
    pass: Repeats are skipped.
    fail: Repeats apply their effect again.
    explain: "dedupe {{ design.delivery.dedupe }}; {{ metrics.redelivered }} redelivered"
    hint: Store processed ids in the effect's transaction.
    concept: dedupe
"""

CRASH_NARRATIVE = """\
The log keeps every event; the workers crash.

## Partitions

More partitions, more events at once.

## Dedupe

Remember processed ids durably.
"""

CRASH_SCENARIO = """\
version: 1
name: crash
duration_seconds: 120
seed: 11
faults:
  - kind: worker_crash
    at_seconds: 30
    group: agent
    instances: 1
    duration_seconds: 30
"""


def write_learner_course(root: Path) -> Path:
    """The fixture course of tests/factories.py with step 2 (``event-log``) deciding partitions
    and dedupe under a ``crash`` scenario (one agent instance down from 30 s to 60 s)."""
    write_course(root)
    write(root / "02-event-log" / "step.yaml", CRASH_STEP)
    write(root / "02-event-log" / "narrative.md", CRASH_NARRATIVE)
    write(root / "scenarios" / "crash.yaml", CRASH_SCENARIO)
    return root
