"""Samples a consumer group's data plane takes of itself at fixed times: backlog, lag, in flight.

The control plane fixes the times (``fine_t``: ``duration / 2400`` apart; every ``per_chart``-th
of them is a chart time). The data plane (``ConsumerGroup.advance`` in
``simulator.engine.consumers``) calls :meth:`GroupSamples.record` just before it processes the
first step action due after a sample time, so a sample at ``t`` sees every step action due at or
before ``t`` (to the nanosecond of the heap keys) and every control action at ``t`` (a crash, a
rebalance, an auto-commit tick at ``t`` advances the group only up to ``t`` before it acts, and
that leaves the sample at ``t`` for later). The one exception is a control action the data plane
itself asks for (``ConsumerGroup.request_control``): it runs right after the sample at its time.
No SimPy event is needed per sample, and the samples do not depend on how often the group is
advanced. A sample only reads the group (its partitions' committed offsets, its early finishes,
the counts the data plane passes); it never changes it.

Per fine time: the events that have started or are gone without starting (the backlog is the
log-end offset minus that). Per chart time: each partition's committed offset and the finish of
an early-completed step (still in flight, its commit not yet made, until then), turned into lags
(log-end offset minus committed offset, ``simulator.engine.eventlog.Topic``) in batches of
:data:`FLUSH_EVERY` so memory stays at a few snapshots whatever the partition count.
"""

from __future__ import annotations

import bisect
import math
from array import array
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from simulator.engine.partition import Partition

FLUSH_EVERY = 32
"""Chart snapshots kept before they are turned into lags (at most this many x partitions x
16 bytes per group)."""


class GroupSamples:
    """The samples of one consumer group.

    ``times``: shape ``(F,)``, the fine sample times in seconds, ascending. ``limit_keys``:
    shape ``(F,)`` int64, the heap-key limit of each (its nanosecond tick, every partition bit
    set: see ``ConsumerGroup.advance``); ``end_key`` follows the last. ``per_chart``: fine samples
    per chart sample (every ``per_chart``-th time is a chart time). ``chart_ends``: shape
    ``(P, F // per_chart)`` int64, each partition's log-end offset at each chart time, or None
    when the log grows as the run goes (a causal run): then each partition's ``n`` is read at
    each chart time.
    ``commit_after``: an early-completed step's batch commit counts only once the step has
    finished (commit after processing). ``parts``: the group's partitions (their ``committed``
    offsets are read at each chart time); ``early_f``: per partition, the finish time of its
    early-completed step (``-inf`` for none), the group's own list, read at each chart time.
    A sample only reads these; it never changes the group.

    After the run: ``started_or_gone`` (``F`` counts), and per chart time ``lag_total``,
    ``lag_worst`` (the largest partition lag), ``in_flight``; per partition
    ``partition_lag_max``.
    """

    def __init__(
        self,
        times: np.ndarray,
        limit_keys: np.ndarray,
        end_key: int,
        per_chart: int,
        chart_ends: np.ndarray | None,
        commit_after: bool,
        parts: Sequence[Partition],
        early_f: list[float],
    ):
        self.parts = parts
        self.early_f = early_f
        chart_t = times[per_chart - 1 :: per_chart]
        self.keys = array("q", limit_keys.astype(np.int64).tolist())
        self.keys.append(end_key)
        self.times: list[float] = times.tolist()
        self.i = 0
        self.per_chart = per_chart
        self.chart_t = chart_t
        self.chart_ends = chart_ends
        self.commit_after = commit_after
        self.started_or_gone = array("q")
        charts = int(chart_t.size)
        partitions = len(parts)
        self.lag_total = np.zeros(charts, dtype=np.int64)
        self.lag_worst = np.zeros(charts, dtype=np.int64)
        self.in_flight = np.zeros(charts, dtype=np.int64)
        self.partition_lag_max = np.zeros(partitions, dtype=np.int64)
        # Per chart snapshot: committed offsets, or log-end minus committed offsets (a growing log).
        self._kept: list[array[int]] = []
        self._early: list[array[float]] = []
        # The early finishes at the last chart snapshot, as a list and as its array (unchanged,
        # as in a causal run, where no step completes early, the next snapshot shares it).
        self._early_seen: list[float] = []
        self._early_last: array[float] = array("d")
        self._busy: list[int] = []
        self._flushed = 0

    def first_at_or_after(self, key: int) -> tuple[int, float]:
        """The first sample whose limit key is at least ``key``: (its limit key, its time in
        seconds), or (``end_key``, ``math.inf``) past the last."""
        i = bisect.bisect_left(self.keys, key, 0, len(self.keys) - 1)
        if i >= len(self.times):
            return self.keys[-1], math.inf
        return self.keys[i], self.times[i]

    @property
    def next_key(self) -> int:
        """Limit key of the next sample not yet taken (``end_key`` after the last)."""
        return self.keys[self.i]

    def record(self, key: int, done: int, busy: int) -> int:
        """Take every sample whose limit key is below ``key``; return the next one's limit key.

        ``done``: events of the group started at least once or gone without starting, now;
        ``busy``: steps in progress now (the caller's counts)."""
        keys = self.keys
        i = self.i
        per_chart = self.per_chart
        snapshot: tuple[array[int], array[float]] | None = None
        while keys[i] < key:
            self.started_or_gone.append(done)
            i += 1
            if i % per_chart == 0:
                if snapshot is None:
                    # From lists: an array built from a list is faster than from an iterator.
                    # A growing log: each partition's log-end offset minus its committed offset
                    # (one pass); else the committed offsets (the log ends are known).
                    parts = self.parts
                    early_f = self.early_f
                    if early_f != self._early_seen:  # else share the last snapshot's array
                        self._early_seen = early_f.copy()
                        self._early_last = array("d", early_f)
                    snapshot = (
                        array("q", [q.n - q.committed for q in parts])
                        if self.chart_ends is None
                        else array("q", [q.committed for q in parts]),
                        self._early_last,
                    )
                self._kept.append(snapshot[0])
                self._early.append(snapshot[1])
                self._busy.append(busy)
                if len(self._busy) >= FLUSH_EVERY:
                    self.flush()
        self.i = i
        return keys[i]

    def release(self) -> None:
        """Drop the references to the group's partitions and early finishes (after the last
        sample), so they are freed with the group's own per-event state."""
        self.parts = ()
        self.early_f = []

    def flush(self) -> None:
        """Turn the kept chart snapshots into lags and steps in flight."""
        n = len(self._busy)
        if n == 0:
            return
        lo, hi = self._flushed, self._flushed + n
        partitions = len(self._kept[0])
        kept = np.frombuffer(b"".join(a.tobytes() for a in self._kept), dtype=np.int64)
        early = np.frombuffer(b"".join(a.tobytes() for a in self._early), dtype=np.float64)
        kept = kept.reshape(n, partitions)
        running = early.reshape(n, partitions) > self.chart_t[lo:hi, None]
        if self.chart_ends is None:
            # Kept: log-end minus committed offsets. An early-completed step still running has
            # not committed yet: its partition lags one more.
            lags = kept + running if self.commit_after else kept
        else:
            committed = kept - running if self.commit_after else kept
            lags = self.chart_ends[:, lo:hi].T - committed
        self.lag_total[lo:hi] = lags.sum(axis=1)
        self.lag_worst[lo:hi] = lags.max(axis=1)
        self.in_flight[lo:hi] = np.asarray(self._busy, dtype=np.int64) + running.sum(axis=1)
        np.maximum(self.partition_lag_max, lags.max(axis=0), out=self.partition_lag_max)
        self._kept.clear()
        self._early.clear()
        self._busy.clear()
        self._flushed = hi
