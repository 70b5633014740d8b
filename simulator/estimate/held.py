"""How much of a group's work a partial stall holds, when runs are causal task graphs.

When a share ``s`` of one group's partitions stops (some of its workers crashed, a cooperative
rebalance), a run does not stop at once: a task stops when it *reaches* a step of that group whose
key sits on a stalled partition, and only the steps that need that step wait (the rest of its
task, and for a researcher the writer and the reviewer after the join). The other researchers
of the same run go on. So the work held grows through the window, from nothing at its start.

The rule (:meth:`RunWork.held`) counts it on one run's schedule with mean step times: the
estimate's view of the run (:func:`simulator.fan_out.run_tasks`) in the stages of the
simulation's graph (:func:`simulator.stages.task_stages`). A run requested ``u`` seconds after
the window starts has its stage ``a`` due at ``u + o_a``. Stage ``a`` of the counted group is held
at the window's end when it is due within the window and one of the keys of the stalled group's
stages it needs (itself included), reached within the window, sits on a stalled partition:
probability ``1 - (1 - s)^k`` for ``k`` such distinct keys. Integrated exactly over ``u`` (the
probability is piecewise constant between the times stages cross the window's edges) and
multiplied by the runs per second, it is the held events' expected count at the window's end.

Keys follow the design's partition key: a task's stages share one key under ``task_id``, a run's
under ``run_id`` and ``tenant_id`` (a tenant's runs taken apart), each event its own under
``event_id``, ``arrival_timestamp`` or a salt of two or more buckets (the salt's buckets are
drawn per event).

The course's saga scenario (the peak, one of two tool workers down 30 s, half the tool partitions
stalled): 111 agent calls held at the restart against 94-120 simulated (seeds 1-3), where
stopping every run that has a stalled key somewhere (97 % of them) held 290.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from simulator.design import Design, PartitionKey
from simulator.fan_out import RunTasks
from simulator.groups import GroupName
from simulator.producer import PRODUCE_TICK_S
from simulator.scenario import Load
from simulator.stages import KIND_MODEL, KIND_STATE, KIND_TOOL, TaskCounts, task_stages

KIND_OF: dict[GroupName, int] = {"agent": KIND_MODEL, "tool": KIND_TOOL, "state": KIND_STATE}
"""The step kind each consumer group processes."""


@dataclass(frozen=True)
class Stage:
    """One stage of a run's schedule: its ``kind`` (:data:`KIND_OF`), its ``events``, its
    ``offset_s`` from the run's request (seconds, mean step times), its ``task`` index and the
    indices of the stages it needs (``needs``: earlier stages of its task and of the tasks it
    waits for, transitively)."""

    kind: int
    events: int
    offset_s: float
    task: int
    needs: tuple[int, ...]


def run_schedule(design: Design, load: Load, tasks: RunTasks) -> list[Stage]:
    """One run's stages in order: the planner, the researchers in parallel after it, the writer
    after every researcher, the reviewer after the writer (a single agent: one task). Counts are
    whole: the run's expected researchers rounded (at least one when there are any), the
    research split among them as evenly as it goes, the first ones taking the rest (as the
    simulation splits a run's research). Offsets use mean step times plus each stage's hop to the
    log (half the producer's tick and half the outbox relay's poll), as
    :func:`simulator.estimate.runs.critical_path_s`."""
    st = load.step_time
    hop = PRODUCE_TICK_S / 2.0
    if design.data_model.outbox:
        hop += design.data_model.outbox_relay_poll_interval_ms / 2000.0
    duration = {
        KIND_MODEL: st.agent_step.mean_seconds,
        KIND_TOOL: st.tool_call.mean_seconds,
        KIND_STATE: design.state_store.write_latency_ms / 1000.0,
    }
    stages: list[Stage] = []

    def chain(work: TaskCounts, start: float, task: int, before: tuple[int, ...]) -> float:
        t = start
        needs = before
        for kind, events in task_stages(work):
            stages.append(Stage(kind, events, t, task, needs))
            needs = (*needs, len(stages) - 1)
            t += duration[kind] + hop
        return t

    def whole(work: tuple[float, float, float]) -> TaskCounts:
        return TaskCounts(*(max(0, int(round(x))) for x in work))

    if tasks.sequential or not tasks.fixed:
        t = 0.0
        for work in tasks.fixed:
            t = chain(whole(work), t, 0, tuple(range(len(stages))))
        return stages
    planner, writer, reviewer = tasks.fixed[0], tasks.fixed[1], tasks.fixed[2]
    end = chain(whole(planner), 0.0, 0, ())
    after_planner = tuple(range(len(stages)))
    m = max(1, int(round(tasks.researchers))) if tasks.researchers > 0 else 0
    totals = [int(round(tasks.researchers * x)) for x in tasks.per_researcher]
    join = end
    for r in range(m):
        share = TaskCounts(*(n // m + (1 if r < n % m else 0) for n in totals))
        join = max(join, chain(share, end, 1 + r, after_planner))
    first = len(stages)
    end = chain(whole(writer), join, m + 1, tuple(range(first)))
    chain(whole(reviewer), end, m + 2, tuple(range(len(stages))))
    return stages


def _key_of(design: Design, stage: int, stages: list[Stage]) -> int:
    """The key scope of a stage of the stalled group within one run: the stage itself (each
    event its own key), its task, or the run (-1)."""
    key = design.event_log.partition_key
    if key in (PartitionKey.event_id, PartitionKey.arrival_timestamp):
        return stage
    if design.event_log.key_salt_buckets > 1:
        return stage
    if key is PartitionKey.task_id:
        return stages[stage].task
    return -1


@dataclass(frozen=True)
class RunWork:
    """The scenario's runs as the held-work rule sees them: ``design``, ``load`` and ``tasks``
    (:func:`simulator.fan_out.run_tasks`), with one run's schedule built once."""

    design: Design
    load: Load
    tasks: RunTasks

    @cached_property
    def stages(self) -> list[Stage]:
        """One run's schedule (:func:`run_schedule`)."""
        return run_schedule(self.design, self.load, self.tasks)

    def step_s(self, group: GroupName) -> float:
        """Mean seconds of one step of ``group`` (a state write: the store's write latency)."""
        if group == "state":
            return self.design.state_store.write_latency_ms / 1000.0
        st = self.load.step_time
        return st.agent_step.mean_seconds if group == "agent" else st.tool_call.mean_seconds

    def held(
        self,
        stalled_group: GroupName | None,
        group: GroupName,
        share: float,
        seconds: float,
        queued_only: bool = False,
    ) -> float:
        """Expected events of ``group`` held at the end of a ``seconds`` long window in which
        ``share`` (0..1) of ``stalled_group``'s partitions stop (rules in the module
        docstring); ``stalled_group`` None: the same partitions of every group's topic (a
        broker loss blocking their producers), so any stage a run reaches in the window may
        hold it. With ``queued_only`` (``group`` the stalled group) only the events produced
        and waiting on a stalled partition: their own key is stalled and none of the stalled
        keys before them held them back. Events, >= 0; 0 for no runs, no window or no share."""
        runs_per_second = self.load.runs_per_second or 0.0
        if runs_per_second <= 0 or seconds <= 0 or share <= 0:
            return 0.0
        design = self.design
        stages = self.stages
        stalled_kind = None if stalled_group is None else KIND_OF[stalled_group]
        kind = KIND_OF[group]
        keep = 1.0 - min(1.0, share)
        t_end = float(seconds)
        total = 0.0
        for a, stage in enumerate(stages):
            if stage.kind != kind:
                continue
            blockers = [
                f for f in stage.needs if stalled_kind is None or stages[f].kind == stalled_kind
            ]
            if stalled_kind is None or stalled_kind == kind:
                blockers.append(a)
            if not blockers or (queued_only and blockers[-1] != a):
                continue
            own = _key_of(design, a, stages)
            # u runs over the requests for which stage a is due within the window; the held
            # probability is constant between the times a blocker crosses the window's edges.
            lo, hi = -stage.offset_s, t_end - stage.offset_s
            cuts = {lo, hi}
            for f in blockers:
                o = stages[f].offset_s
                cuts.update(c for c in (-o, t_end - o) if lo < c < hi)
            edges = sorted(cuts)
            for left, right in zip(edges, edges[1:], strict=False):
                mid = (left + right) / 2.0
                keys = {
                    _key_of(design, f, stages)
                    for f in blockers
                    if 0.0 <= mid + stages[f].offset_s < t_end
                }
                if not keys:
                    continue
                if queued_only:
                    if own not in keys:
                        continue
                    others = [f for f in blockers[:-1] if 0.0 <= mid + stages[f].offset_s < t_end]
                    if any(_key_of(design, f, stages) == own for f in others):
                        continue
                    p = (1.0 - keep) * keep ** (len(keys) - 1)
                else:
                    p = 1.0 - keep ** len(keys)
                total += stage.events * p * (right - left)
        return runs_per_second * total
