"""A task as a chain of stages: the step kinds and the order of a task's calls and writes.

The simulation builds a run's task graph from these stages (``simulator.engine.taskgraph``) and
the estimate lays out a run's schedule with them (``simulator.estimate.held``), so both see the
same run. No numpy here: the estimate loads without the engine.
"""

from __future__ import annotations

from dataclasses import dataclass

KIND_MODEL = 0
KIND_TOOL = 1
KIND_STATE = 2


@dataclass(frozen=True)
class TaskCounts:
    """The work of one task: model calls, tool calls and state writes (integers >= 0)."""

    model: int
    tool: int
    state: int


def task_stages(counts: TaskCounts) -> list[tuple[int, int]]:
    """The stages of one task in order, each ``(kind, events)``: model and tool calls interleave
    evenly (each kind's ``j``-th at fraction ``(j + 0.5) / count`` of the task; ties: model
    first), and the state writes are spread after them, the writes that follow one call forming one
    stage. A task with no call is one stage of its writes."""
    calls: list[tuple[float, int]] = []
    for kind, count in ((KIND_MODEL, counts.model), (KIND_TOOL, counts.tool)):
        calls.extend(((j + 0.5) / count, kind) for j in range(count))
    calls.sort()
    if not calls:
        return [(KIND_STATE, counts.state)] if counts.state else []
    stages: list[tuple[int, int]] = []
    writes = counts.state
    n = len(calls)
    given = 0
    for i, (_, kind) in enumerate(calls):
        stages.append((kind, 1))
        share = (writes * (i + 1)) // n - given
        if share:
            stages.append((KIND_STATE, share))
            given += share
    return stages
