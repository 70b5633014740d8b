"""Builders for test data: small course folders written to a temporary directory."""

from __future__ import annotations

import shutil
from pathlib import Path
from textwrap import dedent

REPO_STEPS = Path(__file__).resolve().parent.parent / "steps"

COURSE_YAML = """\
version: 1
id: fixture-course
title: A fixture course
difficulty: Hard
minutes: 12
summary: Three steps to exercise the loader.
problem: Workers crash and events arrive twice.
how_it_works:
  - Log first.
  - At least once, with idempotency keys.
what_you_build:
  - An event log
budget_usd: 85000
steps:
{steps}
"""

DECIDING_STEP = """\
id: commit-order
title: Commit after processing
summary: Choose when the offset is committed.
scenario: peak
decisions:
  - field: delivery.commit
    label: Commit order
    widget: radio
    help: When the consumer commits its offset.
  - field: event_log.partitions
    label: Partitions
    widget: number
    unit: partitions
    min: 1
    max: 256
  - field: delivery.dedupe
    label: Dedupe
    choices:
      - {value: none, label: None}
      - {value: durable_same_transaction, label: "Durable, same transaction"}
  - field: model.cache.enabled
    label: Response cache
    widget: checkbox
checks:
  - id: no-loss
    title: No event lost
    points: 2
    expr: metrics.lost == 0
    pass: "{{ metrics.processed }} events processed, none lost."
    fail: "{{ metrics.lost }} events were lost."
    explain: "{{ metrics.lost }} events lost"
    concept: commit-order
    needs:
      expr: metrics.processed > 0
      missing: no step event was processed
"""

NARRATIVE = """\
The consumer reads a batch and commits its offset.

## Commit order

Commit after the work is done, so a crash redelivers instead of losing.
"""

PLAIN_STEP = """\
id: {id}
title: {title}
summary: The first paragraph of {title}.
"""

SCENARIO = """\
version: 1
name: {name}
duration_seconds: 60
seed: 7
"""


def write(path: Path, text: str) -> Path:
    """Write ``text`` (dedented) to ``path``, creating folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dedent(text), encoding="utf-8")
    return path


def write_course(root: Path) -> Path:
    """A valid three-step course in ``root``: 01-commit-order (with decisions and a check),
    02-event-log and 03-worker-crash (title and summary only), a ``peak`` scenario, a reference
    design and the shipped pricing catalog. Returns ``root``."""
    folders = ["01-commit-order", "02-event-log", "03-worker-crash"]
    write(root / "course.yaml", COURSE_YAML.format(steps="\n".join(f"  - {f}" for f in folders)))
    write(root / "01-commit-order" / "step.yaml", DECIDING_STEP)
    write(root / "01-commit-order" / "narrative.md", NARRATIVE)
    for folder, title in (("02-event-log", "The event log"), ("03-worker-crash", "A worker crash")):
        write(root / folder / "step.yaml", PLAIN_STEP.format(id=folder[3:], title=title))
        write(root / folder / "narrative.md", f"{title}: the first paragraph.\n")
    write(root / "scenarios" / "peak.yaml", SCENARIO.format(name="peak"))
    write(root / "designs" / "reference.yaml", "version: 1\nname: reference\n")
    shutil.copyfile(REPO_STEPS / "pricing.yaml", root / "pricing.yaml")
    return root
