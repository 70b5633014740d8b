"""The partitioned event log: which partition each step event lands on, and per-partition offsets.

Every consumer group reads its own topic with ``design.event_log.partitions`` partitions. The
producer sends each step event with the design's partition key:

- ``run_id``: all events of a run share a key (per-run order; a run's steps queue on one partition);
- ``task_id``: all events of one agent task (the planner, a researcher, the writer, the reviewer)
  share a key (per-task order; a run's researchers spread over partitions);
- ``tenant_id``: all runs of a tenant share a key; tenants follow the scenario's Zipf spread, so the
  largest tenants make hot partitions whose lag shows it;
- ``event_id``: every event has its own key, which spreads like round robin: the ``k``-th event of
  the topic goes to partition ``k mod partitions`` (no per-aggregate order at all);
- ``arrival_timestamp``: the key is the arrival time in whole milliseconds (spreads load but keeps
  no aggregate's order, the mistake seed 001 warns about).

With ``key_salt_buckets = b > 1`` the key becomes ``key#salt`` with ``salt = (event's position in
its run) mod b``, spreading one aggregate over up to ``b`` partitions.

Key -> partition is ``fmix64(key) mod partitions``, where ``fmix64`` is MurmurHash3's 64-bit
finaliser (Austin Appleby, MurmurHash3.cpp, public domain) over a 64-bit key code: stable across
processes and platforms (no Python ``hash``, no hash randomisation), vectorised with numpy
``uint64`` arithmetic (multiplication wraps modulo 2**64, as in C).

A :class:`Topic` holds one group's events ordered by partition then offset: offset ``k`` of
partition ``p`` is row ``start[p] + k`` of the flat arrays.

With a transactional outbox (``simulator.engine.outbox``) an event is written at its workload
time and reaches the log at the relay's next poll: the topic's ``arrival_s`` is the publish
time, ``written_s`` the write time (where its latency starts); an event the relay had not
published by the end of the window arrives after it. Keys are taken from the event (its record
timestamp is its write time), so the relay changes no partition.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain

import numpy as np

from simulator.design import Design, PartitionKey
from simulator.engine.outbox import OutboxRelay
from simulator.engine.partition import Partition
from simulator.engine.taskgraph import TaskGraph
from simulator.engine.workload import GroupLoad

_M1 = np.uint64(0xFF51AFD7ED558CCD)
_M2 = np.uint64(0xC4CEB9FE1A85EC53)
_S33 = np.uint64(33)

KEY_KIND = {
    PartitionKey.run_id: 1,
    PartitionKey.task_id: 5,
    PartitionKey.tenant_id: 2,
    PartitionKey.event_id: 3,
    PartitionKey.arrival_timestamp: 4,
}
"""A tag in the key code's top byte, so run 7 and tenant 7 are different keys."""


def fmix64(keys: np.ndarray) -> np.ndarray:
    """MurmurHash3 fmix64 of each ``uint64`` in ``keys`` (shape preserved, dtype uint64)."""
    k = keys.astype(np.uint64, copy=True)
    with np.errstate(over="ignore"):
        k ^= k >> _S33
        k *= _M1
        k ^= k >> _S33
        k *= _M2
        k ^= k >> _S33
    return k


def key_codes(design: Design, load: GroupLoad) -> np.ndarray:
    """The 64-bit key code of every event of ``load`` (shape ``(n,)`` uint64), salt included.

    ``event_id`` keys return the event's sequence number in the topic (partitioned round robin).
    """
    log = design.event_log
    n = load.size
    key = log.partition_key
    if key is PartitionKey.event_id:
        return np.arange(n, dtype=np.uint64)
    if key is PartitionKey.run_id:
        base = load.run.astype(np.uint64)
    elif key is PartitionKey.task_id:
        task = load.run if load.task is None else load.task
        base = task.astype(np.uint64)
    elif key is PartitionKey.tenant_id:
        base = load.tenant.astype(np.uint64)
    else:
        base = np.floor(load.arrival_s * 1000.0).astype(np.int64).astype(np.uint64)
    code = (np.uint64(KEY_KIND[key]) << np.uint64(56)) | base
    buckets = log.key_salt_buckets
    if buckets > 1 and n:
        salt = position_in_run(load.run) % buckets
        code = code * np.uint64(64) + salt.astype(np.uint64) + np.uint64(1)
    return code


def position_in_run(run: np.ndarray) -> np.ndarray:
    """For events in arrival order, the index of each event within its run (shape ``(n,)``)."""
    order = np.argsort(run, kind="stable")
    sorted_runs = run[order]
    first = np.ones(run.size, dtype=bool)
    first[1:] = sorted_runs[1:] != sorted_runs[:-1]
    group_start = np.maximum.accumulate(np.where(first, np.arange(run.size), 0))
    pos = np.empty(run.size, dtype=np.int64)
    pos[order] = np.arange(run.size) - group_start
    return pos


def partitions_of(design: Design, load: GroupLoad) -> np.ndarray:
    """The partition of every event of ``load`` (shape ``(n,)`` int64, values ``0..P-1``)."""
    parts = design.event_log.partitions
    codes = key_codes(design, load)
    if design.event_log.partition_key is PartitionKey.event_id:
        return (codes % np.uint64(parts)).astype(np.int64)
    return (fmix64(codes) % np.uint64(parts)).astype(np.int64)


@dataclass
class Topic:
    """One group's events laid out per partition.

    ``start``: shape ``(P + 1,)`` int64; partition ``p`` holds rows ``start[p]:start[p+1]``.
    ``arrival_s``, ``step_s``, ``run``, ``key``: shape ``(n,)``, ordered by partition then offset
    (arrival order within a partition). ``arrival_sorted_s``: all arrivals in time order, for the
    topic's total log-end offset at any time (``searchsorted``). ``written_s``: shape ``(n,)``,
    ordered as ``arrival_s``: when each event was written (to the outbox; its arrival when the
    design has none), the start of its latency.
    """

    name: str
    partitions: int
    start: np.ndarray
    arrival_s: np.ndarray
    step_s: np.ndarray
    run: np.ndarray
    key: np.ndarray
    arrival_sorted_s: np.ndarray
    written_s: np.ndarray
    event: np.ndarray | None = None

    def log_end(self, t: float) -> int:
        """Events produced to the topic with arrival time <= ``t`` (sum of log-end offsets)."""
        return int(np.searchsorted(self.arrival_sorted_s, t, side="right"))

    def log_end_per_partition(self, t: float) -> np.ndarray:
        """Log-end offset of every partition at time ``t``, shape ``(P,)`` int64.

        A column of the grid when ``t`` is one of :meth:`precompute_log_ends`'s times; otherwise
        one vectorised search over ``arrival_s + partition x stride`` (a key that increases along
        the flat arrays because every arrival is below ``stride``).
        """
        column = self._grid_index.get(t)
        if column is not None:
            return self._grid[:, column]
        probes = self._bases + min(t, self._stride - 0.5)
        ends = np.searchsorted(self._stacked, probes, side="right")
        return ends - self.start[:-1]

    def release(self) -> None:
        """Drop the event arrays (after the result is built); the topic is empty afterwards."""
        empty_f = np.empty(0, dtype=np.float64)
        empty_i = np.empty(0, dtype=np.int64)
        self.start = np.zeros(self.partitions + 1, dtype=np.int64)
        self.arrival_s = self.step_s = self.arrival_sorted_s = self.written_s = empty_f
        self.run = empty_i
        self.key = np.empty(0, dtype=np.uint64)
        self._stacked = empty_f
        self._grid = np.zeros((self.partitions, 0), dtype=np.int64)
        self._grid_index: dict[float, int] = {}

    def log_end_grid(self) -> np.ndarray:
        """The grid of :meth:`precompute_log_ends`: shape ``(P, k)`` int64, partition ``p``'s
        log-end offset at its ``k``-th time."""
        return self._grid

    def precompute_log_ends(self, times: np.ndarray) -> None:
        """Compute every partition's log-end offset at each of ``times`` (sorted seconds, shape
        ``(k,)``) at once: a ``(P, k)`` grid built from one count of arrivals per (partition,
        interval) and a cumulative sum."""
        k = int(times.size)
        counts = np.diff(self.start)
        owner = np.repeat(np.arange(self.partitions, dtype=np.int64), counts)
        # Interval of each arrival: the first sample time at or after it.
        slot = np.searchsorted(times, self.arrival_s, side="left")
        keep = slot < k
        cells = np.bincount(owner[keep] * k + slot[keep], minlength=self.partitions * k)
        self._grid = np.cumsum(cells.reshape(self.partitions, k), axis=1)
        self._grid_index = {float(x): i for i, x in enumerate(times.tolist())}

    def __post_init__(self) -> None:
        span = float(self.arrival_s.max()) + 1.0 if self.arrival_s.size else 1.0
        self._stride = max(span, 1.0)
        counts = np.diff(self.start)
        owner = np.repeat(np.arange(self.partitions, dtype=np.float64), counts)
        self._stacked = self.arrival_s + owner * self._stride
        self._bases = np.arange(self.partitions, dtype=np.float64) * self._stride
        self._grid = np.zeros((self.partitions, 0), dtype=np.int64)
        self._grid_index = {}


def build_topic(design: Design, load: GroupLoad, relay: OutboxRelay | None = None) -> Topic:
    """Key every event of ``load`` and order it by partition, then arrival (a stable sort).

    With ``relay``, events reach the log at its publish times (an event still in the outbox at
    the end of the window arrives after it, and is never processed)."""
    parts = design.event_log.partitions
    part = partitions_of(design, load)
    codes = key_codes(design, load)
    written = load.arrival_s
    arrival = written if relay is None else relay.publish_times(written)
    # A stable sort of 16-bit keys is numpy's radix sort, linear in the events (partitions are
    # at most 4,096: engine/partition.py); the order is the same as sorting the int64s.
    narrow = part.astype(np.uint16) if parts <= 1 << 16 else part
    order = np.argsort(narrow, kind="stable")
    counts = np.bincount(part, minlength=parts)
    start = np.zeros(parts + 1, dtype=np.int64)
    np.cumsum(counts, out=start[1:])
    return Topic(
        name=load.name,
        partitions=parts,
        start=start,
        arrival_s=arrival[order],
        step_s=load.step_s[order],
        run=load.run[order],
        key=codes[order],
        arrival_sorted_s=arrival,
        written_s=written[order],
    )


def graph_partitions(design: Design, graph: TaskGraph) -> np.ndarray:
    """The partition of every event of a causal run graph (shape ``(E,)`` int64), per topic: an
    ``event_id`` key deals each topic's events round robin in event order; a timestamp key is
    decided at append time (``simulator.engine.causal``), so this returns zeros for it."""
    out = np.zeros(graph.events, dtype=np.int64)
    if design.event_log.partition_key is PartitionKey.arrival_timestamp:
        return out
    for kind in range(3):
        rows = np.nonzero(graph.kind == kind)[0]
        load = GroupLoad(
            "k",
            np.zeros(rows.size),
            np.zeros(rows.size),
            graph.run[rows],
            graph.tenant[rows],
            0.0,
            0.0,
            task=graph.task[rows],
        )
        out[rows] = partitions_of(design, load)
    return out


def causal_topic(
    name: str,
    partitions: int,
    parts: list[Partition],
    graph: TaskGraph,
    written_stage_s: np.ndarray,
    key: np.ndarray,
) -> Topic:
    """The topic a causal run left in the log (after the run): every partition's appended events
    in offset order, with their write times (the stage's production time)."""
    counts = np.array([q.n for q in parts], dtype=np.int64)
    start = np.zeros(partitions + 1, dtype=np.int64)
    np.cumsum(counts, out=start[1:])
    # One conversion of the joined lists (one per partition costs more than the copying).
    ev = np.array(list(chain.from_iterable(q.ev for q in parts)), dtype=np.int64)
    arrival = np.array(list(chain.from_iterable(q.arrival for q in parts)), dtype=np.float64)
    return Topic(
        name=name,
        partitions=partitions,
        start=start,
        arrival_s=arrival,
        step_s=graph.step_s[ev],
        run=graph.run[ev],
        key=key[ev],
        arrival_sorted_s=np.sort(arrival),
        written_s=written_stage_s[graph.stage[ev]],
        event=ev,
    )
