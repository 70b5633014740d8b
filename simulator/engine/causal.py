"""Runs as causal task graphs in motion: step events produced as the steps before them are applied.

A run's graph (``simulator.engine.taskgraph``) says which stage follows which. This module is the
producer side of the data plane for a runs-driven scenario:

- When a stage's last event is *applied* (completed for the first time, reported by the consumer
  groups' data plane through :meth:`CausalRuns.applied`), the stages waiting for it are produced:
  the next stage of its task, the researchers after the planner, the writer once every researcher
  is done.
- A produced event is written at the apply time (its *write time*, where its latency starts), goes
  through the design's outbox relay if any (``simulator.engine.outbox``), and is appended to its
  partition's log on the next tick of :data:`PRODUCE_TICK_S` after that. The tick stands for the
  producer's linger, the broker's append and the consumer's fetch (Kafka's producer lingers 5 ms
  by default since 4.0; a fetch returns as soon as a record is there): 0-20 ms, 10 ms on average,
  per hop. It is also what lets the three consumer groups run their own time-ordered loops: an
  event produced in one tick reaches a log only at the next, so every group can be brought to the
  tick's end on its own (a conservative lockstep, exact for this model).
- A step that is never applied (lost, dropped, parked in the dead-letter queue) produces nothing,
  so its run *stalls*; a backlog delays every later step of the runs waiting on it.

The partition of an event follows the design's key (``simulator.engine.eventlog.partitions_of``),
computed up front except for ``arrival_timestamp``, whose key is the append time.
"""

from __future__ import annotations

import heapq
import math
from array import array
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from simulator.engine.outbox import OutboxRelay
from simulator.engine.partition import (
    DONE,
    IDLE,
    MASK,
    PBITS,
    STREAM_END,
    TICKS_PER_S,
    Partition,
)
from simulator.engine.partition import (
    DROP as DROP_OFFSET,
)
from simulator.engine.taskgraph import NEXT_FAN_OUT, TaskGraph
from simulator.engine.world import World
from simulator.producer import PRODUCE_TICK_S

if TYPE_CHECKING:
    from simulator.engine.consumers import ConsumerGroup


_M1 = 0xFF51AFD7ED558CCD
_M2 = 0xC4CEB9FE1A85EC53
_U64 = (1 << 64) - 1


class Gate:
    """A partition's producers blocked or dropping until ``until_s`` (a broker loss); counts the
    events ``delayed`` and ``dropped``."""

    __slots__ = ("until_s", "drop", "delayed", "dropped")

    def __init__(self, until_s: float, drop: bool):
        self.until_s = until_s
        self.drop = drop
        self.delayed = 0
        self.dropped = 0


DeliveryHook = Callable[["ConsumerGroup", Partition, int, int, float], None]
"""A fault's look at every appended event: ``(group, partition, offset, event id, time s)``."""


def fmix64_int(key: int) -> int:
    """MurmurHash3's fmix64 of one 64-bit integer (as ``simulator.engine.eventlog.fmix64``)."""
    k = key & _U64
    k ^= k >> 33
    k = (k * _M1) & _U64
    k ^= k >> 33
    k = (k * _M2) & _U64
    k ^= k >> 33
    return k


class CausalRuns(World):
    """Produces every run's step events as its graph allows and appends them to the groups' logs.

    ``graph``: the runs (its ``step_s`` as the groups see them); ``groups``: the consumer groups in
    kind order (agent, tool, state); ``partition``: per event, its partition (shape ``(E,)``
    int64; ignored for a timestamp key); ``timestamp_key``: partition by the append time in whole
    milliseconds (``partitions`` partitions); ``relay``: the outbox relay or None.

    After the run: ``run_done_s`` (per run, the apply time of its last stage, NaN when unfinished),
    ``stage_written_s`` (per stage, when it was produced, NaN when never).
    """

    def __init__(
        self,
        graph: TaskGraph,
        groups: Sequence[ConsumerGroup],
        partition: np.ndarray,
        partitions: int,
        timestamp_key: bool,
        relay: OutboxRelay | None,
        tick_s: float = PRODUCE_TICK_S,
    ):
        super().__init__()
        self.graph = graph
        self.groups = list(groups)
        self.tick_s = tick_s
        self.relay = relay
        self.partitions = partitions
        self.timestamp_key = timestamp_key
        self.ev_stage: list[int] = graph.stage.tolist()
        self.ev_kind: list[int] = graph.kind.tolist()
        self.ev_part: list[int] = partition.tolist()
        self.ev_step: list[float] = graph.step_s.tolist()
        self.stage_lo: list[int] = graph.stage_lo.tolist()
        self.stage_left: list[int] = np.diff(graph.stage_lo).tolist()
        self.stage_next: list[int] = graph.stage_next.tolist()
        self.stage_need: list[int] = graph.stage_need.tolist()
        self.stage_run: list[int] = graph.stage_run.tolist()
        self.fan_out = graph.fan_out
        self.stage_written_s = array("d", [math.nan]) * len(self.stage_next)
        self.run_done_s = array("d", [math.nan]) * graph.runs
        self.buckets: dict[int, list[int]] = {}
        self.bucket_keys: list[int] = []
        self.delivery_hooks: list[DeliveryHook] = []
        # (kind, partition) -> its gate while brokers are lost (see :meth:`gate`).
        self.gates: dict[tuple[int, int], Gate] = {}
        self.held: dict[int, list[int]] = {}
        # Model calls applied so far and their seconds, per task and per run (kept when a layer
        # asks: ``track_model_work``; the checkpoint rework of a crash reads them).
        self.track = False
        self.task_calls: list[int] = []
        self.task_call_s: list[float] = []
        self.run_calls: list[int] = []
        self.run_call_s: list[float] = []
        self.ev_task: list[int] = []
        self.ev_run: list[int] = []
        for r, s in zip(graph.first_stage.tolist(), graph.request_s.tolist(), strict=True):
            self.stage_need[r] = 0
            self._produce(r, s)

    # ------------------------------------------------------------------ producing

    def _produce(self, stage: int, t: float) -> None:
        """Stage ``stage`` is produced at ``t`` seconds: its events reach the log on the tick
        after their publish time."""
        self.stage_written_s[stage] = t
        relay = self.relay
        publish = t if relay is None else relay.publish_time(t)
        k = int(publish / self.tick_s) + 1
        buckets = self.buckets
        bucket = buckets.get(k)
        if bucket is None:
            buckets[k] = [stage]
            heapq.heappush(self.bucket_keys, k)
        else:
            bucket.append(stage)

    def track_model_work(self) -> None:
        """Keep the model calls applied per task and per run from now on."""
        graph = self.graph
        tasks = int(graph.task.max()) + 1 if graph.events else 0
        self.track = True
        self.task_calls = [0] * tasks
        self.task_call_s = [0.0] * tasks
        self.run_calls = [0] * graph.runs
        self.run_call_s = [0.0] * graph.runs
        self.ev_task = graph.task.tolist()
        self.ev_run = graph.run.tolist()

    def applied(self, event: int, t: float, publish: bool = True) -> None:
        """Event ``event`` was applied for the first time at ``t``: produce what waited for it.

        ``publish`` False: its service died between the step's commit and publishing what comes
        next (no outbox: the dual write). The stage counts as applied but nothing is produced
        (the run stalls) until a run of one of its events again publishes (:meth:`republish`);
        the stages still unpublished at the end are the run's ``publishes_lost``."""
        if self.track and self.ev_kind[event] == 0:
            task, run, s = self.ev_task[event], self.ev_run[event], self.ev_step[event]
            self.task_calls[task] += 1
            self.task_call_s[task] += s
            self.run_calls[run] += 1
            self.run_call_s[run] += s
        stage = self.ev_stage[event]
        stage_left = self.stage_left
        left = stage_left[stage] - 1
        stage_left[stage] = left
        if left:
            return
        if not publish:
            self.unpublished.add(stage)
            return
        # :meth:`_complete`'s common case inlined: one stage follows.
        nxt = self.stage_next[stage]
        if nxt >= 0:
            need = self.stage_need
            left = need[nxt] - 1
            need[nxt] = left
            if left == 0:
                self._produce(nxt, t)
        else:
            self._complete(stage, t)

    def republish(self, event: int, t: float) -> None:
        """Event ``event`` ran again and completed at ``t``: if its stage's publish was lost,
        this run publishes it."""
        stage = self.ev_stage[event]
        if stage in self.unpublished:
            self.unpublished.discard(stage)
            self._complete(stage, t)

    def _complete(self, stage: int, t: float) -> None:
        """Stage ``stage`` is applied at ``t``: produce the stages waiting for it."""
        nxt = self.stage_next[stage]
        need = self.stage_need
        if nxt >= 0:
            need[nxt] -= 1
            if need[nxt] == 0:
                self._produce(nxt, t)
        elif nxt == NEXT_FAN_OUT:
            for x in self.fan_out[stage]:
                need[x] -= 1
                if need[x] == 0:
                    self._produce(x, t)
        else:
            self.run_done_s[self.stage_run[stage]] = t

    def gate(self, kind: int, partition: int, gate: Gate) -> None:
        """Until ``gate.until_s``, events for ``partition`` of the group of ``kind`` wait in their
        producers (``gate.drop`` False: they reach the log on the first tick after) or are lost
        (``gate.drop``: appended and dropped, as an ``acks=0`` send to an offline partition)."""
        self.gates[(kind, partition)] = gate

    def _hold(self, event: int, until_s: float) -> None:
        k = int(until_s / self.tick_s) + 1
        held = self.held.get(k)
        if held is None:
            self.held[k] = [event]
            if k not in self.buckets:
                heapq.heappush(self.bucket_keys, k)
        else:
            held.append(event)

    def _deliver(self, k: int, tick_key: int) -> None:
        """Append the events of tick ``k`` (heap key ``tick_key``) to their partitions and wake
        the idle ones. A group first takes its samples due before the tick (they read its
        log-end offsets)."""
        t = k * self.tick_s
        stages = self.buckets.pop(k, [])
        held = self.held.pop(k, None)
        if held is not None and held:
            self._append(held, t, tick_key)
        if stages:
            self._deliver_stages(stages, t, tick_key)

    def _deliver_stages(self, stages: list[int], t: float, tick_key: int) -> None:
        """Append the events of the stages produced for this tick, in the order they were
        written (the groups run their ticks one after another, so the list is in the order the
        groups reached them); a gate (:meth:`gate`) holds or drops some."""
        written = self.stage_written_s
        if len(stages) > 1:
            # By (written, stage): by stage, then stably by written (faster than a tuple key).
            stages.sort()
            stages.sort(key=written.__getitem__)
        lo = self.stage_lo
        gates = self.gates
        if gates or self.timestamp_key or self.delivery_hooks:
            for stage in stages:
                for e in range(lo[stage], lo[stage + 1]):
                    kind = self.ev_kind[e]
                    p = self._partition_of(e, stage)
                    if gates:
                        gate = gates.get((kind, p))
                        if gate is not None and t < gate.until_s:
                            if not gate.drop:
                                gate.delayed += 1
                                self._hold(e, gate.until_s)
                                continue
                            gate.dropped += 1
                            part = self.groups[kind].parts[p]
                            if part.fail_attempts is None:
                                part.fail_attempts = {}
                            part.fail_attempts[part.n] = DROP_OFFSET
                    self._append_one(kind, p, e, t, tick_key)
            return
        # The common case, :meth:`_append_one` inlined: no gate, no hook, partitions by key.
        groups = self.groups
        ev_kind = self.ev_kind
        ev_part = self.ev_part
        ev_step = self.ev_step
        nan = math.nan
        heappush = heapq.heappush
        for stage in stages:
            for e in range(lo[stage], lo[stage + 1]):
                p = ev_part[e]
                g = groups[ev_kind[e]]
                if g.sample_key < tick_key:
                    g.samples_to_key(tick_key - 1)
                part = g.parts[p]
                part.arrival.append(t)
                part.step.append(ev_step[e])
                part.ev.append(e)
                part.first_finish.append(nan)
                part.first_start.append(nan)
                part.n += 1
                if part.stream_wait or part.state == DONE:
                    part.stream_wait = False
                    part.state = IDLE
                    part.next_t = t
                    heappush(g.heap, tick_key | p)

    def _append(self, events: list[int], t: float, tick_key: int) -> None:
        """Append events that waited in their producers (to the partitions they were produced
        for)."""
        for e in events:
            self._append_one(
                self.ev_kind[e], self._partition_of(e, self.ev_stage[e]), e, t, tick_key
            )

    def _partition_of(self, event: int, stage: int) -> int:
        """The partition of ``event``: by its key, or for a timestamp key by the millisecond its
        stage was produced (its record's create time)."""
        if self.timestamp_key:
            code = (4 << 56) | int(math.floor(self.stage_written_s[stage] * 1000.0))
            return fmix64_int(code) % self.partitions
        return self.ev_part[event]

    def _append_one(self, kind: int, p: int, event: int, t: float, tick_key: int) -> None:
        """Append ``event`` at ``t`` to partition ``p`` of the group of ``kind`` and wake the
        partition if it waits for a record; the group first takes its samples due before the
        tick (they read its log-end offsets)."""
        g = self.groups[kind]
        if g.sample_key < tick_key:
            g.samples_to_key(tick_key - 1)
        part = g.parts[p]
        offset = part.n
        part.arrival.append(t)
        part.step.append(self.ev_step[event])
        part.ev.append(event)
        part.first_finish.append(math.nan)
        part.first_start.append(math.nan)
        part.n = offset + 1
        for hook in self.delivery_hooks:
            hook(g, part, offset, event, t)
        if part.stream_wait or part.state == DONE:
            part.stream_wait = False
            part.state = IDLE
            part.next_t = t
            heapq.heappush(g.heap, tick_key | p)

    # ------------------------------------------------------------------ time

    def advance(self, until: float) -> None:
        """Bring every group's data plane to ``until`` seconds, delivering produced events on
        their ticks (see the module docstring)."""
        until_key = (int(until * TICKS_PER_S) << PBITS) | MASK
        groups = self.groups
        tick = self.tick_s
        ticks_per_s = TICKS_PER_S
        pbits = PBITS
        bucket_keys = self.bucket_keys
        heappop = heapq.heappop
        floor = math.floor
        deliver = self._deliver
        deliver_stages = self._deliver_stages
        buckets = self.buckets
        held = self.held
        # Each group's next key, kept current: a delivery can change any group's, advancing a
        # group changes only its own (what it produces waits in the buckets). The three groups
        # (agent, tool, state) are spelled out: in this order they advance through a window.
        g0, g1, g2 = groups
        plane0, plane1, plane2 = g0.plane(), g1.plane(), g2.plane()
        n0, n1, n2 = g0.next_key(), g1.next_key(), g2.next_key()
        b = -1  # the first bucket's tick, and b_key its heap key (kept while it is the first)
        b_key = STREAM_END
        while True:
            if bucket_keys:
                if bucket_keys[0] != b:
                    b = bucket_keys[0]
                    b_key = int(b * tick * ticks_per_s) << pbits
            else:
                b = -1
                b_key = STREAM_END
            a = n0 if n0 < n1 else n1
            if n2 < a:
                a = n2
            if b_key <= a and b_key <= until_key:
                heappop(bucket_keys)
                if held:
                    deliver(b, b_key)
                else:  # :meth:`_deliver` without events held by a gate
                    stages = buckets.pop(b, None)
                    if stages:
                        deliver_stages(stages, b * tick, b_key)
                n0, n1, n2 = g0.next_key(), g1.next_key(), g2.next_key()
                continue
            if a > until_key:
                break
            # The window: to the end of the tick of the first action (what it produces reaches
            # a log on the next tick), and before the first bucket.
            a_t = (a >> pbits) / ticks_per_s
            limit = (int((floor(a_t / tick) + 1) * tick * ticks_per_s) << pbits) - 1
            if until_key < limit:
                limit = until_key
            if b_key <= limit:
                limit = b_key - 1
            if limit < a:
                limit = a | MASK
            # Each plane returns its group's next key, or -1 to have a control action run.
            if n0 <= limit:
                n0 = plane0(limit)
                while n0 < 0:
                    g0.run_control()
                    n0 = plane0(limit)
            if n1 <= limit:
                n1 = plane1(limit)
                while n1 < 0:
                    g1.run_control()
                    n1 = plane1(limit)
            if n2 <= limit:
                n2 = plane2(limit)
                while n2 < 0:
                    g2.run_control()
                    n2 = plane2(limit)
        for g in groups:
            g.advance_to_key(until_key)

    def log_end(self, group: ConsumerGroup) -> int:
        """Events appended to ``group``'s log so far (every partition's log-end offset)."""
        return sum(part.n for part in group.parts)


def run_latencies(
    request_s: np.ndarray, done_s: np.ndarray, duration_s: float
) -> tuple[np.ndarray, int, int]:
    """Each run's latency in seconds (request to report; a run unfinished at ``duration_s``
    counts its age then, censored), shape ``(R,)``; the runs completed and the runs unfinished."""
    done = done_s <= duration_s
    latency = np.where(done, done_s - request_s, duration_s - request_s)
    completed = int(done.sum())
    return latency, completed, int(request_s.size) - completed


def order_violations(
    aggregate: np.ndarray, written_s: np.ndarray, event: np.ndarray, applied_s: np.ndarray
) -> int:
    """Events applied before an earlier-written event of the same aggregate, in one topic.

    All arrays shape ``(n,)``: the aggregate (run or task id) of each event, its write time
    (seconds), its event id (ties in write time: the lower id was written first) and its first
    apply time (NaN: never applied, not counted). An event counts when some event of its
    aggregate written before it was applied after it."""
    return order_violations_by([aggregate], written_s, event, applied_s)[0]


def order_violations_by(
    aggregates: Sequence[np.ndarray],
    written_s: np.ndarray,
    event: np.ndarray,
    applied_s: np.ndarray,
) -> list[int]:
    """:func:`order_violations` of one topic for each of ``aggregates`` (e.g. run and task ids,
    each shape ``(n,)``), sorting the events by write time once for all of them."""
    ok = ~np.isnan(applied_s)
    if not ok.any():
        return [0] * len(aggregates)
    written, ev, applied_ok = written_s[ok], event[ok], applied_s[ok]
    # By (write time, event id); each aggregate then sorts that order stably by its own ids:
    # the order of np.lexsort((ev, written, agg)) (event ids are unique: no ties left).
    by_written = np.lexsort((ev, written))
    top = float(np.nanmax(applied_ok)) + 1.0
    out = []
    for aggregate in aggregates:
        agg_w = aggregate[ok][by_written]
        order = by_written[np.argsort(agg_w, kind="stable")]
        agg, applied = aggregate[ok][order], applied_ok[order]
        first = np.ones(agg.size, dtype=bool)
        first[1:] = agg[1:] != agg[:-1]
        # Running maximum of the apply times within each aggregate, of the events before this.
        shift = np.cumsum(first) * top
        running = np.maximum.accumulate(applied + shift) - shift
        before = np.empty_like(running)
        before[0] = -np.inf
        before[1:] = running[:-1]
        before[first] = -np.inf
        out.append(int((applied < before).sum()))
    return out


def critical_paths(graph: TaskGraph, hop_s: float) -> np.ndarray:
    """Each run's critical path in seconds, shape ``(R,)``: its latency if nothing queued. A
    stage takes its longest step (its events run at once) plus ``hop_s`` to reach the log; a task
    the sum of its stages; a run its planner, its longest researcher, its writer and its reviewer
    (a single agent: its one task). Uses the step times the groups see (``graph.step_s``)."""
    if graph.events == 0:
        return np.zeros(graph.runs)
    lo = graph.stage_lo[:-1]
    stage_s = np.maximum.reduceat(graph.step_s, lo) + hop_s
    stage_task = graph.task[lo]
    tasks = int(graph.task.max()) + 1
    task_s = np.bincount(stage_task, weights=stage_s, minlength=tasks)
    task_run = np.zeros(tasks, dtype=np.int64)
    task_run[graph.task] = graph.run
    per_run = np.bincount(task_run, minlength=graph.runs)
    out = np.zeros(graph.runs)
    start = 0
    for r, n in enumerate(per_run.tolist()):
        t = task_s[start : start + n]
        if n == 1:
            out[r] = t[0]
        elif n > 0:
            middle = t[1 : n - 2]
            out[r] = t[0] + (middle.max() if middle.size else 0.0) + t[n - 2] + t[n - 1]
        start += n
    return out
