"""The tool-runner fleet: ``runners x concurrency_per_runner`` slots shared by the tool group.

A tool call consumed from a partition runs on the first free slot; when all are busy it waits,
first come first served (the partition stays blocked meanwhile). The fleet is an exact FCFS
``c``-server queue: requests arrive in non-decreasing time, and each takes the slot that frees
first (Kiefer and Wolfowitz's workload recursion for the GI/G/c queue), so a tool call that finds
every slot busy starts at the earliest finish among them. With no runners at all a tool call never
starts (its finish is :data:`NEVER_S`) and the tool group never drains.

Unavailability windows (``add_outage``, for the faults layer) reject calls with REJECT_DOWN.
"""

from __future__ import annotations

import heapq

from simulator.design import ToolsSection
from simulator.engine.provider import REJECT_DOWN, Interruptible, Windows

NEVER_S = 1e15
"""Finish time of a tool call that can never run (no runners): beyond any simulated window."""


class RunnerPool(Interruptible):
    """FCFS slots of the tool-runner fleet; ``admit(t, step_s)`` returns the call's finish time."""

    def __init__(self, tools: ToolsSection):
        self.slots = tools.runners * tools.concurrency_per_runner
        self.free_at: list[float] = [0.0] * self.slots
        self.outages = Windows()
        self.rejected_down = 0

    def admit(self, t: float, step_s: float) -> float:
        """Start a call at ``t`` or when a slot frees; its finish time (NEVER_S without slots),
        or REJECT_DOWN in an outage."""
        if self.outages.first <= t and self.refused_down(t):
            return REJECT_DOWN
        if not self.slots:
            return NEVER_S
        free = self.free_at[0]
        start = free if free > t else t
        finish = start + step_s
        heapq.heapreplace(self.free_at, finish)
        return finish
