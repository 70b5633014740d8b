"""A run as a causal task graph: which step events a run makes, and which must be applied first.

The orchestration pattern shapes every run (``simulator.fan_out.run_tasks`` gives the counts):

- ``orchestrator_worker``: a *planner* task, then ``researchers`` tasks that run in parallel, then
  a *writer* task once every researcher is done (a join), then a *reviewer* task;
- ``peer_agents``: the same shape; peers without ``max_subagents`` spawn
  ``fan_out.uncapped_peer_multiplier`` times the planned researchers, each doing a researcher's
  share of the work, so calls and tokens multiply; a cap bounds the researchers, and a cap the
  fan-out never reaches bounds nothing;
- ``single_agent``: one task does the planner's, every researcher's, the writer's and the
  reviewer's steps one after another (its research runs in sequence).

A task is a chain of *stages*; a stage is one model call, one tool call, or the state writes that
follow it (written together, so they are in flight at once). A stage's step events are produced
when the stage before it in its task has been applied (every event of it has completed once); the
first stage of the researchers when the planner's last stage is applied; the writer's first when
every researcher's last is applied. So a backlog delays the rest of the run, and a step that is
lost (never applied) stalls its run.

Step events get consecutive ids in stage order (stage ``s`` holds ids ``stage_lo[s] ..
stage_lo[s + 1] - 1``). The arrays are built once per run *shape* (its counts) and repeated for
every run of that shape, so building the graph costs numpy operations, not a Python loop per event.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from simulator.stages import TaskCounts, task_stages

NEXT_NONE = -1
"""``stage_next`` value: the run's last stage (its completion completes the run)."""
NEXT_FAN_OUT = -2
"""``stage_next`` value: the planner's last stage; its completion produces ``fan_out[stage]``."""


@dataclass
class GraphTemplate:
    """One run shape's graph, ids relative to the run: ``kind`` (per event), ``task`` (per event,
    task index within the run), ``stage_lo`` (shape ``(S + 1,)``), ``stage_next`` (per stage: the
    next stage, :data:`NEXT_NONE` or :data:`NEXT_FAN_OUT`), ``stage_need`` (per stage: stages that
    must complete before it is produced), ``fan_out`` (the researchers' first stages), ``first``
    (the stage produced at the run's request)."""

    kind: np.ndarray
    task: np.ndarray
    stage_lo: np.ndarray
    stage_next: np.ndarray
    stage_need: np.ndarray
    fan_out: list[int]
    tasks: int

    @property
    def events(self) -> int:
        """Step events of one run of this shape."""
        return int(self.kind.size)


def build_template(
    planner: TaskCounts,
    researchers: list[TaskCounts],
    writer: TaskCounts,
    reviewer: TaskCounts,
    sequential: bool,
) -> GraphTemplate:
    """The graph of one run: planner -> researchers (parallel) -> writer -> reviewer, or, with
    ``sequential``, one task doing all of it in that order. Empty tasks are left out."""
    tasks: list[TaskCounts] = [planner, *researchers, writer, reviewer]
    if sequential:
        tasks = [
            TaskCounts(
                sum(t.model for t in tasks), sum(t.tool for t in tasks), sum(t.state for t in tasks)
            )
        ]
        chains = [task_stages(t) for t in tasks]
        roles = ["single"]
    else:
        chains = [task_stages(t) for t in tasks]
        roles = ["planner"] + ["researcher"] * len(researchers) + ["writer", "reviewer"]
    kinds: list[int] = []
    task_of: list[int] = []
    lo: list[int] = []
    nxt: list[int] = []
    need: list[int] = []
    firsts: list[int] = []
    lasts: list[int] = []
    kept_roles: list[str] = []
    for role, chain in zip(roles, chains, strict=True):
        if not chain:
            continue
        t_index = len(kept_roles)
        kept_roles.append(role)
        firsts.append(len(lo))
        for kind, count in chain:
            lo.append(len(kinds))
            kinds.extend([kind] * count)
            task_of.extend([t_index] * count)
            nxt.append(len(lo))  # the next stage of this chain, fixed below for the last
            need.append(1)
        lasts.append(len(lo) - 1)
    lo.append(len(kinds))
    fan_out: list[int] = []
    research = [i for i, r in enumerate(kept_roles) if r == "researcher"]
    after = [i for i, r in enumerate(kept_roles) if r in ("writer", "reviewer")]
    for i, role in enumerate(kept_roles):
        last = lasts[i]
        if role == "planner" and research:
            nxt[last] = NEXT_FAN_OUT
            fan_out = [firsts[j] for j in research]
        elif role == "researcher":
            nxt[last] = firsts[after[0]] if after else NEXT_NONE
        elif role == "planner" or role == "writer":
            later = [j for j in range(i + 1, len(kept_roles)) if kept_roles[j] != "researcher"]
            nxt[last] = firsts[later[0]] if later else NEXT_NONE
        else:
            nxt[last] = NEXT_NONE
    for j, first in enumerate(firsts):
        need[first] = 0 if j == 0 else 1
    if research and after:
        need[firsts[after[0]]] = len(research)
    if not research and kept_roles and kept_roles[0] == "planner" and len(kept_roles) > 1:
        need[firsts[1]] = 1
    return GraphTemplate(
        kind=np.asarray(kinds, dtype=np.int64),
        task=np.asarray(task_of, dtype=np.int64),
        stage_lo=np.asarray(lo, dtype=np.int64),
        stage_next=np.asarray(nxt, dtype=np.int64),
        stage_need=np.asarray(need, dtype=np.int64),
        fan_out=fan_out,
        tasks=len(kept_roles),
    )


def split_counts(total: float, parts: int, base: int = 0) -> list[int]:
    """``parts`` integers summing to ``round(total)`` (as evenly as possible); ``base`` shifts
    which parts get the remainder, so runs of one shape do not all favour the first task."""
    whole = int(math.floor(total + 0.5))
    if parts <= 0:
        return []
    q, r = divmod(whole, parts)
    return [q + (1 if (i - base) % parts < r else 0) for i in range(parts)]


@dataclass
class TaskGraph:
    """Every run's graph, in global ids (see the module docstring).

    Per event (shape ``(E,)`` int64): ``kind`` (0 model, 1 tool, 2 state), ``run``, ``task``
    (global task id), ``stage``, ``tenant``; ``step_s`` (float64 seconds). Per stage (shape
    ``(S,)``): ``stage_lo`` (shape ``(S + 1,)``), ``stage_next``, ``stage_need``, ``stage_run``;
    ``fan_out``: ``{planner's last stage: researchers' first stages}``. Per run (shape ``(R,)``):
    ``request_s`` (float64 seconds: when the run was requested), ``first_stage``.
    """

    kind: np.ndarray
    run: np.ndarray
    task: np.ndarray
    stage: np.ndarray
    tenant: np.ndarray
    step_s: np.ndarray
    stage_lo: np.ndarray
    stage_next: np.ndarray
    stage_need: np.ndarray
    stage_run: np.ndarray
    fan_out: dict[int, list[int]]
    request_s: np.ndarray
    first_stage: np.ndarray

    @property
    def events(self) -> int:
        """Step events of every run."""
        return int(self.kind.size)

    @property
    def runs(self) -> int:
        """Runs requested in the window."""
        return int(self.request_s.size)


def assemble(
    templates: list[GraphTemplate],
    shape_of_run: np.ndarray,
    request_s: np.ndarray,
    tenant_of_run: np.ndarray,
) -> TaskGraph:
    """Repeat each run's template in run order (run ``r`` uses ``templates[shape_of_run[r]]``)
    into one :class:`TaskGraph`; step times are filled by the caller."""
    runs = int(request_s.size)
    ev_per = np.array([t.events for t in templates], dtype=np.int64)[shape_of_run]
    st_per = np.array([t.stage_lo.size - 1 for t in templates], dtype=np.int64)[shape_of_run]
    tk_per = np.array([t.tasks for t in templates], dtype=np.int64)[shape_of_run]
    ev_base = np.concatenate([[0], np.cumsum(ev_per)]).astype(np.int64)
    st_base = np.concatenate([[0], np.cumsum(st_per)]).astype(np.int64)
    tk_base = np.concatenate([[0], np.cumsum(tk_per)]).astype(np.int64)
    kind = np.empty(int(ev_base[-1]), dtype=np.int64)
    task = np.empty_like(kind)
    stage = np.empty_like(kind)
    run = np.repeat(np.arange(runs, dtype=np.int64), ev_per)
    n_st = int(st_base[-1])
    stage_lo = np.empty(n_st + 1, dtype=np.int64)
    stage_lo[-1] = ev_base[-1]
    stage_next = np.empty(n_st, dtype=np.int64)
    stage_need = np.empty(n_st, dtype=np.int64)
    stage_run = np.repeat(np.arange(runs, dtype=np.int64), st_per)
    fan_out: dict[int, list[int]] = {}
    for s, tpl in enumerate(templates):
        which = np.nonzero(shape_of_run == s)[0]
        if which.size == 0 or tpl.events == 0:
            continue
        e0 = ev_base[which][:, None]
        s0 = st_base[which][:, None]
        rel_e = np.arange(tpl.events, dtype=np.int64)[None, :]
        idx = (e0 + rel_e).ravel()
        kind[idx] = np.broadcast_to(tpl.kind, (which.size, tpl.events)).ravel()
        task[idx] = (tk_base[which][:, None] + tpl.task[None, :]).ravel()
        stage_of_rel = np.repeat(np.arange(tpl.stage_lo.size - 1), np.diff(tpl.stage_lo))
        stage[idx] = (s0 + stage_of_rel[None, :]).ravel()
        n_s = tpl.stage_lo.size - 1
        sidx = (s0 + np.arange(n_s, dtype=np.int64)[None, :]).ravel()
        stage_lo[sidx] = (e0 + tpl.stage_lo[None, :-1]).ravel()
        rel_next = tpl.stage_next[None, :]
        stage_next[sidx] = np.where(rel_next >= 0, s0 + rel_next, rel_next).ravel()
        stage_need[sidx] = np.broadcast_to(tpl.stage_need, (which.size, n_s)).ravel()
        if tpl.fan_out:
            last = int(np.nonzero(tpl.stage_next == NEXT_FAN_OUT)[0][0])
            targets = np.asarray(tpl.fan_out, dtype=np.int64)
            for base in st_base[which].tolist():
                fan_out[base + last] = (base + targets).tolist()
    first_stage = st_base[:-1].copy()
    return TaskGraph(
        kind=kind,
        run=run,
        task=task,
        stage=stage,
        tenant=tenant_of_run[run] if runs else run,
        step_s=np.zeros(kind.size, dtype=np.float64),
        stage_lo=stage_lo,
        stage_next=stage_next,
        stage_need=stage_need,
        stage_run=stage_run,
        fan_out=fan_out,
        request_s=request_s,
        first_stage=first_stage,
    )


def due_times(graph: TaskGraph) -> np.ndarray:
    """Each event's *due time*, seconds, shape ``(E,)``: when it would be produced if nothing
    queued, given the step times the runs drew (``graph.step_s``). A run's first stage is due at
    its request; a later stage when every stage it waits for is due plus that stage's longest
    step (its events run at once). No publish delay is added, so an event is never produced, let
    alone started, before it is due.

    The backlog of a causal run counts the events due and not started (docs/simulator-model.md,
    "the backlog of causal runs"): a stalled run's steps count though nothing produced them, as
    an open-loop event counts from its arrival.
    """
    if graph.events == 0:
        return np.zeros(0, dtype=np.float64)
    lo = graph.stage_lo[:-1]
    n_stages = int(lo.size)
    duration = np.maximum.reduceat(graph.step_s, lo)
    stage_task = graph.task[lo]
    # Within a task its stages are consecutive: a stage is due the sum of the stages before it
    # in its task after the task starts.
    ends = np.cumsum(duration)
    first = np.ones(n_stages, dtype=bool)
    first[1:] = stage_task[1:] != stage_task[:-1]
    first_idx = np.maximum.accumulate(np.where(first, np.arange(n_stages), 0))
    before_task = ends[first_idx] - duration[first_idx]
    offset = ends - duration - before_task
    tasks = int(stage_task.max()) + 1
    total = np.bincount(stage_task, weights=duration, minlength=tasks)
    # A task starts when its run is requested (the first) or when the last task it waits for
    # ends: the planner before the researchers, each researcher before the writer, the writer
    # before the reviewer. Edges (task, the task that waits for it) go forward in task order,
    # so raising every task's start to its predecessors' ends until nothing changes (as many
    # rounds as the longest chain) gives each task the latest end among its predecessors.
    last_idx = np.nonzero(np.r_[first[1:], True])[0]
    start = np.full(tasks, -np.inf)
    start[stage_task[graph.first_stage]] = graph.request_s
    nxt = graph.stage_next[last_idx]
    sources = [np.nonzero(nxt >= 0)[0]]
    targets = [stage_task[nxt[sources[0]]]]
    fanning = np.nonzero(nxt == NEXT_FAN_OUT)[0]
    if fanning.size:
        fans = [graph.fan_out[stage] for stage in last_idx[fanning].tolist()]
        sources.append(np.repeat(fanning, [len(f) for f in fans]))
        targets.append(stage_task[np.asarray([x for f in fans for x in f], dtype=np.int64)])
    src = np.concatenate(sources)
    dst = np.concatenate(targets)
    while src.size:
        raised = start.copy()
        np.maximum.at(raised, dst, (start + total)[src])
        if np.array_equal(raised, start):
            break
        start = raised
    stage_due = start[stage_task] + offset
    return stage_due[graph.stage]
