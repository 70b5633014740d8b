"""One partition of a group's topic and its consumer-side state; the heap keys and states.

A consumer group (``simulator.engine.consumers``) keeps one :class:`Partition` per partition of its
topic: the partition's arrivals and step times, and where its consumer is (next offset, committed
offset, batch, owner, state). The data plane orders what partitions do next by integer *heap
keys*: ``(round(t x TICKS_PER_S) << PBITS) | partition``, which compare faster than tuples.

``Partition.fail_attempts`` (for the faults layer) maps an offset to how its attempts fail:
a count of attempts that fail, :data:`EVERY_ATTEMPT`, :data:`PARK`, :data:`DROP` or :data:`ASK`.
"""

from __future__ import annotations

import bisect
import math
from array import array

PBITS = 12
"""Bits of a heap key that hold the partition (at most 4096 partitions, the design's limit)."""
MASK = (1 << PBITS) - 1
TICKS_PER_S = 1e9
"""Heap keys order times to the nanosecond."""

STREAM_GUARD_S = 2e-9
"""A partition waits on the arrival stream only for a record at least this much later than now
(so its stream key is certainly still ahead); nearer ones are woken through the heap."""
STREAM_END = 1 << 62
"""Key after every real key: the arrival stream's sentinel."""

NAN = math.nan
NANS = (math.nan,)

# Partition states.
IDLE = 0  # in the heap at its next arrival time; holds no slot
ACTIVE = 1  # holds a slot; in the heap at the finish of its step (or now, between steps)
RETRY = 2  # holds a slot; in the heap at the time of its next attempt
WAIT_SLOT = 3  # has records, waits for an instance slot; not in the heap
PARKED = 4  # no owner (crashed, revoked, or waiting for a rebalance); not in the heap
POLL = 5  # was handed a slot; in the heap now, polls next
DONE = 6  # every event processed; not in the heap
SLOT_HOLDING = frozenset((ACTIVE, RETRY, POLL))
"""The states that hold one of the instance's slots (and always a heap entry)."""

# Why a partition's batch is being ended (Partition.revoking).
REVOKE_NONE = 0
REVOKE_REBALANCE = 1
REVOKE_STOP = 2

EVERY_ATTEMPT = -1
"""``Partition.fail_attempts`` value: the event fails on every attempt (poison)."""
PARK = -2
"""``Partition.fail_attempts`` value: park the event at once (dead-lettered, e.g. quarantined)."""
DROP = -3
"""``Partition.fail_attempts`` value: skip the event at once, uncounted (its fault counts it)."""
ASK = -4
"""``Partition.fail_attempts`` value: the faults layer decides each attempt (its
``failed_attempt`` hook: the attempt goes through, or fails and is retried after a wait)."""


class Partition:
    """One partition of the topic and its consumer-side state.

    Offsets are indexes into ``arrival``/``step`` (offset 0 is the first event of the window).
    ``pos``: next offset to start; ``cur``: offset in progress or -1; ``batch_end``: end of the
    fetched batch (exclusive); ``committed``: committed offset; ``hw``: first offset never completed
    (every offset below it completed at least once, or was given up); ``started_max``: one past the
    highest offset ever started; ``next_t``: time of its heap entry; ``stream_wait``: idle until
    its next record arrives, woken by the arrival stream (no heap entry); ``refetch_until``: offsets
    below it were fetched before, so fetching them again is a redelivery. ``first_finish`` /
    ``first_start``: per offset, seconds
    (NaN until it happens), as ``array("d")`` (8 bytes an offset). ``ev``: per offset, the run
    graph's event id, for a causal run (``simulator.engine.causal``: offsets are appended as
    events are produced); empty otherwise.
    """

    __slots__ = (
        "pid",
        "arrival",
        "step",
        "first_finish",
        "first_start",
        "n",
        "arrived",
        "pos",
        "cur",
        "busy_until",
        "batch_end",
        "batch_t",
        "committed",
        "hw",
        "started_max",
        "refetch_until",
        "owner",
        "state",
        "attempt",
        "failures",
        "bsize",
        "slot",
        "revoking",
        "memory",
        "fail_attempts",
        "next_t",
        "stream_wait",
        "ev",
    )

    def __init__(self, pid: int, arrival: list[float], step: list[float]):
        self.pid = pid
        self.arrival = arrival
        self.step = step
        self.n = len(arrival)
        self.first_finish = array("d", NANS) * self.n
        self.first_start = array("d", NANS) * self.n
        self.arrived = 0
        self.pos = 0
        self.cur = -1
        self.busy_until = 0.0
        self.batch_end = 0
        self.batch_t = 0.0
        self.committed = 0
        self.hw = 0
        self.started_max = 0
        self.refetch_until = 0
        self.owner = -1
        self.state = PARKED
        self.attempt = 0
        self.failures = 0
        self.bsize = 1
        self.slot = False
        self.revoking = REVOKE_NONE
        self.memory = -1
        self.fail_attempts: dict[int, int] | None = None
        self.next_t = 0.0
        self.stream_wait = False
        self.ev: list[int] = []

    def log_end(self, t: float) -> int:
        """Events of this partition that arrived by ``t`` (its log-end offset)."""
        return bisect.bisect_right(self.arrival, t)
