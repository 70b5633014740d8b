"""Checkpoints as closed forms: the agents a run's calls are split over, and the checkpoint writes
a run makes to the state store under each ``checkpoint.granularity``.

Used by the fault layer that charges checkpoint writes to the state store and the rework a crash
costs (``simulator.faults.checkpoint``) and by the monthly cost (``simulator.cost``).
"""

from __future__ import annotations

from simulator.design import CheckpointGranularity, Design, OrchestrationPattern

DEFAULT_SUBAGENTS = 5
"""Researcher subagents assumed per run when the design sets no ``max_subagents``."""


def agents_per_run(design: Design) -> int:
    """Agents a run's model calls are split over: 1 for a single agent, else planner + researchers
    (``max_subagents``, or :data:`DEFAULT_SUBAGENTS`) + writer + reviewer."""
    orchestration = design.orchestration
    if orchestration.pattern is OrchestrationPattern.single_agent:
        return 1
    return (orchestration.max_subagents or DEFAULT_SUBAGENTS) + 3


def checkpoint_writes_per_run(design: Design, model_calls_per_run: float) -> float:
    """State-store writes one run makes for its checkpoints: one after every model call
    (``per_step``), one as each agent finishes (``per_agent``: :func:`agents_per_run`), or one at
    the run's end (``per_run``). ``model_calls_per_run`` >= 0; returns writes per run (>= 0)."""
    granularity = design.checkpoint.granularity
    if granularity is CheckpointGranularity.per_step:
        return float(model_calls_per_run)
    if granularity is CheckpointGranularity.per_agent:
        return float(min(agents_per_run(design), max(model_calls_per_run, 1.0)))
    return 1.0
