"""Checkpoint granularity: the state-store writes checkpoints cost, the model calls a crash makes a
run redo, and the tokens paid again.

**The writes** (:class:`CheckpointWrites`, every simulation that drives whole runs): a checkpoint
is a write to the state store, one after every model call (``per_step``), one as each agent
finishes (``per_agent``) or one at the run's end (``per_run``)
(``simulator.checkpoints.checkpoint_writes_per_run``). They share the store's
``write_capacity_per_second`` with the state group's writes: the store's rate limiter admits the
state group's writes at the capacity the checkpoints leave (a fluid approximation: the window's
checkpoint writes are spread evenly over it; at or above the capacity they leave the state group
:data:`MIN_CAPACITY_SHARE` of it). They are counted in ``checkpoint_writes`` (the writes of the
agent steps processed in the window) and priced per write by ``simulator.cost``.

**The rework**:

when agent workers crash (``worker_crash`` on the agent group), every run whose agent steps the
crashed members were working through resumes from its last checkpoint:

- ``per_step``: progress is durable after every step; only the calls the crash abandoned are
  redone (the engine counts those, and the response cache may answer them);
- ``per_agent``: the run redoes the completed calls of its current agent. A run's model calls are
  split evenly over its agents: a single agent (``single_agent``) or a planner, ``max_subagents``
  researchers (``simulator.checkpoints.DEFAULT_SUBAGENTS`` when uncapped), a writer and a reviewer;
- ``per_run``: the run redoes every call it completed.

A redone call is a new call: the run re-plans from its checkpoint, so its prompts are not the ones
already answered and the response cache cannot answer them, and ``reuse_recorded_results`` has no
recorded result to reuse past the checkpoint. Each redone call counts in ``model_calls`` and
``model_calls_repeated`` (so its tokens in ``tokens`` and ``tokens_repeated``), and its time is
added to the run's next unfinished step on the partition, which holds that partition's worker slot
for it (a run's calls go one after another).

Scope and approximations: only scenarios that drive whole runs (``load.runs_per_second``) have
runs to resume; the single-stage mode (step events straight into the agent group, as in the
worked sizing example) has none, and its crashes redo only what the engine redelivers. A run is
*in progress* on a crashed partition when it has completed steps and unfinished steps there
(exact when the partition key is the run id; with other keys a run's steps spread over partitions
and only those on crashed partitions count). Completed steps after the committed offset are
redelivered by the engine and are not counted again here. The redone calls go to the provider as
one call of their summed duration (its rate limits see one request).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from simulator.checkpoints import agents_per_run, checkpoint_writes_per_run
from simulator.design import CheckpointGranularity, Design
from simulator.engine.causal import CausalRuns
from simulator.engine.hooks import FaultLayer, Layers, amend
from simulator.result import SimulationResult
from simulator.scenario import Scenario

if TYPE_CHECKING:
    from simulator.engine.consumers import ConsumerGroup
    from simulator.engine.eventlog import Topic
    from simulator.engine.partition import Partition
    from simulator.engine.run import Simulation


def position_in_run(topic: Topic) -> tuple[np.ndarray, np.ndarray]:
    """For every event of ``topic`` (partition order): its index among its run's events in arrival
    order, and its run's number of events in the topic; both shape ``(n,)`` int64."""
    n = topic.arrival_s.size
    if n == 0:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty
    order = np.lexsort((topic.arrival_s, topic.run))
    runs = topic.run[order]
    first = np.ones(n, dtype=bool)
    first[1:] = runs[1:] != runs[:-1]
    starts = np.nonzero(first)[0]
    sizes = np.diff(np.append(starts, n))
    group_start = np.repeat(starts, sizes)
    index = np.empty(n, dtype=np.int64)
    index[order] = np.arange(n) - group_start
    size = np.empty(n, dtype=np.int64)
    size[order] = np.repeat(sizes, sizes)
    return index, size


class CheckpointRework(FaultLayer):
    """The rework worker crashes cost runs (see the module docstring): an ``on_crash`` hook,
    installed with ``worker_crash`` faults; it acts only when the scenario drives whole runs.

    Counters: ``calls_redone`` (model calls), ``seconds_redone`` (worker seconds),
    ``runs_resumed``. Contributes a note when calls were redone.
    """

    def __init__(self) -> None:
        self.granularity = CheckpointGranularity.per_step
        self.agents = 1
        self.topic: Topic | None = None
        self.drives_runs = False
        self.calls_redone = 0
        self.seconds_redone = 0.0
        self.runs_resumed = 0
        self._index: np.ndarray | None = None
        self._size: np.ndarray | None = None
        self.sim: Simulation | None = None

    @classmethod
    def wanted(cls, design: Design, scenario: Scenario) -> bool:
        """Installed when the scenario crashes workers."""
        return any(fault.kind == "worker_crash" for fault in scenario.faults)

    def install(self, sim: Simulation, layers: Layers) -> None:
        """Read the design's checkpoint granularity and agents per run, and the agent topic."""
        design = sim.design
        self.granularity = design.checkpoint.granularity
        self.agents = agents_per_run(design)
        self.topic = sim.topics["agent"]
        self.drives_runs = sim.scenario.load.runs_per_second is not None
        self.sim = sim
        if sim.world is not None and self.granularity is not CheckpointGranularity.per_step:
            sim.world.track_model_work()

    def _positions(self, topic: Topic) -> tuple[np.ndarray, np.ndarray]:
        if self._index is None or self._size is None:
            self._index, self._size = position_in_run(topic)
        return self._index, self._size

    def on_crash(self, group: ConsumerGroup, t: float, members: Sequence[int]) -> None:
        """Members ``members`` of ``group`` crash at ``t``: charge the rework of their runs."""
        topic = self.topic
        if (
            self.drives_runs
            and group.world is not None
            and group.name == "agent"
            and self.granularity is not CheckpointGranularity.per_step
        ):
            self._causal_rework(group, t, members)
            return
        if (
            not self.drives_runs
            or group.world is not None
            or topic is None
            or group.name != "agent"
            or self.granularity is CheckpointGranularity.per_step
        ):
            return
        group.settle(t)
        crashed = set(members)
        index, size = self._positions(topic)
        for part in group.parts:
            if part.owner not in crashed or part.hw == 0 or part.hw >= part.n:
                continue
            lo = int(topic.start[part.pid])
            runs = topic.run[lo : lo + part.n]
            done, open_ = runs[: part.hw], runs[part.hw :]
            resumed = np.intersect1d(done, open_)
            if resumed.size == 0:
                continue
            kept = min(part.committed, part.hw)
            first_open = {int(r): part.hw + int(np.argmax(open_ == r)) for r in resumed.tolist()}
            calls = np.nonzero(np.isin(runs[:kept], resumed))[0]
            if self.granularity is CheckpointGranularity.per_agent and calls.size:
                rows = slice(lo, lo + part.n)
                seg = (index[rows] * self.agents) // np.maximum(size[rows], 1)
                current = np.array(
                    [seg[first_open[int(r)]] for r in runs[calls].tolist()], dtype=np.int64
                )
                calls = calls[seg[calls] == current]
            if calls.size == 0:
                continue
            steps = topic.step_s[lo + calls]
            for r in np.unique(runs[calls]).tolist():
                mine = runs[calls] == r
                extra = float(steps[mine].sum())
                target = first_open[int(r)]
                part.step[target] += extra
                self.runs_resumed += 1
            self.calls_redone += int(calls.size)
            self.seconds_redone += float(steps.sum())
            group.model_calls += int(calls.size)
            group.model_calls_repeated += int(calls.size)

    def _causal_rework(self, group: ConsumerGroup, t: float, members: Sequence[int]) -> None:
        """Causal runs: every task (``per_agent``) or run (``per_run``) with a step not yet
        applied on a crashed partition resumes from its checkpoint: it redoes the model calls it
        had applied, less those the engine redelivers anyway (completed after the committed
        offset). Their time is added to its first unfinished step there."""
        world = group.world
        assert isinstance(world, CausalRuns)
        group.settle(t)
        crashed = set(members)
        per_run = self.granularity is CheckpointGranularity.per_run
        unit_of = world.ev_run if per_run else world.ev_task
        calls = world.run_calls if per_run else world.task_calls
        seconds = world.run_call_s if per_run else world.task_call_s
        kinds = world.ev_kind
        steps = world.ev_step
        resumed: dict[int, tuple[Partition, int]] = {}
        redelivered: dict[int, tuple[int, float]] = {}
        for part in group.parts:
            if part.owner not in crashed:
                continue
            for offset in range(min(part.committed, part.hw), part.n):
                e = part.ev[offset]
                unit = unit_of[e]
                if offset < part.hw:
                    if kinds[e] == 0:
                        n, s = redelivered.get(unit, (0, 0.0))
                        redelivered[unit] = (n + 1, s + steps[e])
                elif unit not in resumed:
                    resumed[unit] = (part, offset)
        for unit, (part, offset) in resumed.items():
            again, again_s = redelivered.get(unit, (0, 0.0))
            redo = calls[unit] - again
            if redo <= 0:
                continue
            extra = max(0.0, seconds[unit] - again_s)
            part.step[offset] += extra
            self.runs_resumed += 1
            self.calls_redone += redo
            self.seconds_redone += extra
            group.model_calls += redo
            group.model_calls_repeated += redo

    def contribute(self, sim: Simulation, result: SimulationResult) -> SimulationResult:
        """A note on the runs resumed and the calls they redid."""
        if not self.calls_redone:
            return result
        return amend(
            result,
            [
                f"checkpoint {self.granularity}: {self.runs_resumed} runs resumed from their "
                f"checkpoint redid {self.calls_redone} model calls "
                f"({self.seconds_redone:.0f} worker-seconds)"
            ],
        )


MIN_CAPACITY_SHARE = 0.01
"""Share of the store's write capacity left to the state group when checkpoint writes alone would
fill it."""


class CheckpointWrites(FaultLayer):
    """The state-store writes of checkpoints (see the module docstring), in every simulation that
    drives whole runs. Attributes: ``writes_per_s`` (reserved on the store), ``per_agent_step``
    (checkpoint writes per agent step event)."""

    def __init__(self) -> None:
        self.writes_per_s = 0.0
        self.per_agent_step = 0.0

    @classmethod
    def wanted(cls, design: Design, scenario: Scenario) -> bool:
        """Installed when the scenario drives whole runs (they have checkpoints)."""
        return scenario.load.runs_per_second is not None

    def install(self, sim: Simulation, layers: Layers) -> None:
        """Reserve the checkpoints' share of the store's write capacity for the window."""
        graph = sim.graph
        if graph is not None:
            steps = int((graph.kind == 0).sum())
            runs = graph.runs
        else:
            topic = sim.topics["agent"]
            steps = int(topic.arrival_s.size)
            runs = int(np.unique(topic.run).size) if steps else 0
        if steps == 0:
            return
        writes = runs * checkpoint_writes_per_run(sim.design, steps / runs)
        self.per_agent_step = writes / steps
        self.writes_per_s = writes / sim.duration
        sim.store.reserve(self.writes_per_s, MIN_CAPACITY_SHARE)

    def contribute(self, sim: Simulation, result: SimulationResult) -> SimulationResult:
        """``checkpoint_writes``: the checkpoint writes of the agent steps processed."""
        agent = result.metrics.by_group.get("agent")
        if agent is None or not self.per_agent_step:
            return result
        return amend(result, checkpoint_writes=round(agent.processed * self.per_agent_step))
