"""A consumer group reading its topic: assignment, polls, commits, lag, crashes and redelivery.

This module is the simulator's data plane. It processes a group's step events *in time order*,
merging two sources: a heap of "next thing this partition does" times (steps finishing, retries,
resumed partitions) and the topic's arrivals in time order (which wake idle partitions). It is
driven by the SimPy control plane (``simulator.engine.run``): every control event (an
auto-commit tick, a crash, a rebalance) first calls :meth:`ConsumerGroup.advance` up to its time
and then changes the group. No SimPy process or timeout exists per step event; per event the work
is a few arithmetic operations and at most one heap operation (none for a step that starts on an
idle partition and finishes before its next record arrives).

Approximations, and why they keep the figures exact where it matters: shared capacity (provider
RPM/TPM and concurrency, runner slots, state-store write rate) is decided when a step asks for it,
in global time order, so first come first served holds exactly; poll batches and commits are
tracked per partition (see "Poll batches" below for how an instance's ``max_poll_records`` is
shared); a rebalance's join and sync take a fixed :data:`REBALANCE_SYNC_S`.

Model (Kafka consumer semantics, simplified where the docstrings say so):

- **Ownership**: partitions are assigned to live members by ``simulator.assignment.rebalance``
  (range, round robin, cooperative sticky, as Kafka computes them). Member ``i`` of the agent group
  has id ``agent-i`` (zero padded, so string order is numeric order).
- **One event at a time per partition** (per-key order). Between polls the partition's events are
  processed back to back: event ``k`` starts at ``max(arrival_k, finish_{k-1})`` or later if the
  shared resource (model provider, runner fleet, state store) makes it wait: the Lindley
  recursion, evaluated in global time order so shared limits are honoured exactly.
- **Concurrency**: an instance works on at most ``concurrency_per_instance`` partitions at once;
  a partition holds one of its instance's slots for a whole poll batch. When an instance owns more
  partitions than slots, partitions with records wait for a slot first come first served.
- **Poll batches**: an instance's ``max_poll_records`` are shared by the partitions it processes at
  once: a partition fetches at most ``max(1, max_poll_records // min(owned, slots))`` records per
  poll, and only records already in the log (a poll with nothing to fetch parks the partition until
  its next arrival, like a long poll). So the records an instance has fetched and not committed stay
  within about one ``max_poll_records``, as Kafka's one-poll-at-a-time loop keeps them.
- **Commits**: ``after_processing`` commits at the end of each batch; ``before_processing`` commits
  the whole batch when it is fetched; ``auto`` commits every instance's fetched positions every
  ``auto_commit_interval_ms`` (:meth:`ConsumerGroup.auto_commit`, called by the control plane),
  which can run ahead of the work.
- **Lag** of a partition at time ``t`` is its log-end offset (events arrived by ``t``) minus its
  committed offset.
- **Crash** (:meth:`ConsumerGroup.crash`): the member's in-progress step is abandoned (its model
  call was paid and still occupies the provider), nothing more is committed, and its partitions
  wait.
  Records the crashed member fetched after the committed offset are *redelivered* when a new owner
  polls from the committed offset; records it had completed after the committed offset are applied
  again (a *duplicate effect*) unless dedupe skips them; records between its completed position and
  a committed offset that ran ahead are *lost*. With ``mid_batch = False`` the member stops at the
  end of its current batches instead.
- **Dedupe**: ``durable_same_transaction`` skips every redelivered record already applied (within
  ``dedupe_key_retention_hours``); ``in_memory`` skips it only when the member that applied it is
  still the same live process; ``none`` applies it again. A repeated agent step is a repeated model
  call (and its tokens) unless the response cache holds its answer (within ``cache.ttl_hours``),
  in which case it takes no time and no call. A repeated tool call with an idempotency key derived
  from the event id has no second effect.
- **Rebalance** (:meth:`ConsumerGroup.rebalance`): eager strategies (range, round robin) revoke
  every partition; each member finishes the batch it is processing, commits, and only when all have
  done so does the new assignment start, after :data:`REBALANCE_SYNC_S` (join and sync). Cooperative
  sticky revokes only the partitions that move; each moves as soon as its batch is done.
- **Retries**: a step the resource rejects (HTTP 429 or unavailable) is retried by the same consumer
  with backoff: the model's retry policy for agent steps, ``failures.retry`` for tool calls and
  state writes. When the model policy's attempts run out the step has *failed*; a failed step is
  retried under ``failures.retry`` and, when that limit is reached too, dead-lettered (with a
  dead-letter queue) or dropped (counted as lost).

Extension points for the faults layer (issue "Simulator faults"):

- instance down windows: :meth:`ConsumerGroup.crash` / :meth:`ConsumerGroup.restart` (the control
  plane in ``run.py`` schedules them and the session-timeout detection);
- a rebalance at any time: :meth:`ConsumerGroup.rebalance` (``pause_s`` delays the new assignment);
- resource unavailability: ``stage.add_outage(start, end)`` on the provider, runner pool or state
  store;
- per-event failures (poison): :attr:`Partition.fail_attempts` maps an offset to the attempts that
  fail (``-1`` = every attempt); :meth:`ConsumerGroup.step_failed` is the failure path;
- slow batches: :meth:`ConsumerGroup.poll_interval_exceeded` is called at the end of a batch that
  took longer than ``max_poll_interval_ms``.
"""

from __future__ import annotations

import bisect
import contextlib
import heapq
import math
import random
from array import array
from collections import deque
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from simulator.assignment import member_ids
from simulator.assignment import rebalance as kafka_rebalance
from simulator.design import (
    AssignmentStrategy,
    CommitMode,
    Dedupe,
    Design,
    IdempotencyKeyFrom,
    RetryPolicy,
)
from simulator.design import ConsumerGroup as GroupConfig
from simulator.engine.eventlog import Topic
from simulator.engine.provider import REJECT_429, backoff_seconds
from simulator.engine.samples import GroupSamples

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

REBALANCE_SYNC_S = 1.0
"""Seconds from the end of revocation to the new assignment processing (JoinGroup + SyncGroup)."""

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

REVOKE_NONE = 0
REVOKE_REBALANCE = 1
REVOKE_STOP = 2


class Stage(Protocol):
    """The shared resource a group's step uses (provider, runner pool, state store)."""

    def admit(self, t: float, step_s: float) -> float:
        """Finish time of a step tried at ``t``, or a negative rejection code."""
        ...

    def add_outage(self, start: float, end: float) -> None:
        """Make the resource unavailable in ``[start, end)``."""
        ...


_NO_KEYS = array("q", [STREAM_END, STREAM_END])
_NO_LOG: array[int] = array("q")
"""Stand-ins for a group without samples (never used: its sample key is STREAM_END)."""

PARK = -2
"""``Partition.fail_attempts`` value: park the event at once (dead-lettered, e.g. quarantined)."""
DROP = -3
"""``Partition.fail_attempts`` value: skip the event at once, uncounted (its fault counts it)."""


class FaultHooks(Protocol):
    """Hooks of the faults layer on a group (``simulator.faults.hooks.GroupHooks``).

    Called on rare paths only: a rejected step, a repeated agent step, a batch over
    ``max_poll_interval_ms``, an event given up.
    """

    def retry_wait(self, group: ConsumerGroup, part: Partition, t: float, code: float) -> float:
        """Seconds to wait before retrying a rejected step, or -1 for the group's own rule."""
        ...

    def on_repeat(
        self, group: ConsumerGroup, part: Partition, pos: int, t: float, completed: bool
    ) -> int:
        """A repeated agent step: 0 call the model, 2 answered without a call, -1 default."""
        ...

    def on_slow_batch(self, group: ConsumerGroup, part: Partition, t: float) -> bool:
        """A batch over the poll interval ended at ``t``: True when its commit must fail."""
        ...

    def on_give_up(
        self, group: ConsumerGroup, part: Partition, pos: int, t: float, dead_lettered: bool
    ) -> None:
        """Offset ``pos`` was given up at ``t`` (dead-lettered or parked, else dropped)."""
        ...


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
    (NaN until it happens), as ``array("d")`` (8 bytes an offset).
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

    def log_end(self, t: float) -> int:
        """Events of this partition that arrived by ``t`` (its log-end offset)."""
        return bisect.bisect_right(self.arrival, t)


class ConsumerGroup:
    """One consumer group (``agent``, ``tool`` or ``state``) over its :class:`Topic`.

    ``stage``: the shared resource each step needs (see :class:`Stage`). ``rng``: the group's own
    ``random.Random`` (retry jitter). ``bins``: number of chart bins of ``bin_s`` seconds for error
    counts. Counters (step events): ``processed`` (first completions), ``redelivered``,
    ``duplicate_effects``, ``dedupe_skipped``, ``lost``, ``dead_lettered``, ``model_calls``,
    ``model_calls_repeated``, ``cache_hits``, ``http_429s``, ``unavailable_errors``,
    ``step_failures``, ``rebalances``, ``slow_batches``.

    The heap holds one int key per scheduled partition, ``(round(t x 1e9) << 12) | partition``
    (nanosecond order; the exact time is ``Partition.next_t``), which compares faster than tuples.

    *Early completion*: when a step is the last of its batch and the partition's next record
    arrives after the step finishes, the step's completion and batch commit are booked when it
    starts and the partition's next heap visit is that arrival (one heap operation per event instead
    of two). ``early_f[p]`` keeps the step's finish; the samples count such steps as still in
    flight (and their commit as not yet made) until then, and :meth:`settle` turns them back into
    steps in progress before any control event looks at the partitions.
    """

    def __init__(
        self,
        name: str,
        design: Design,
        config: GroupConfig,
        topic: Topic,
        stage: Stage,
        rng: random.Random,
        *,
        retry_policy: RetryPolicy,
        bin_s: float,
        bins: int,
        is_agent: bool = False,
    ):
        self.name = name
        self.design = design
        self.config = config
        self.topic = topic
        self.stage = stage
        self.rng = rng
        self.is_agent = is_agent
        self.retry_policy = retry_policy
        self.failure_policy = design.failures.retry
        delivery = design.delivery
        self.commit_mode = delivery.commit
        self.dedupe = delivery.dedupe
        self.dedupe_retention_s = delivery.dedupe_key_retention_hours * 3600.0
        cache = design.model.cache
        self.cache_ttl_s = cache.ttl_hours * 3600.0 if (is_agent and cache.enabled) else -1.0
        self.tool_keyed = (
            name == "tool"
            and design.tools.side_effect_idempotency_key
            and delivery.idempotency_key_from is IdempotencyKeyFrom.event_id
        )
        self.dlq = design.failures.dead_letter_queue.enabled
        self.max_poll_interval_s = config.max_poll_interval_ms / 1000.0
        self.session_timeout_s = config.session_timeout_ms / 1000.0
        self.eager = config.assignment is not AssignmentStrategy.cooperative_sticky

        if topic.partitions > 1 << PBITS:
            raise ValueError(f"at most {1 << PBITS} partitions, got {topic.partitions}")
        arr = topic.arrival_s
        steps = topic.step_s
        start = topic.start
        self.parts: list[Partition] = []
        for p in range(topic.partitions):
            lo, hi = int(start[p]), int(start[p + 1])
            self.parts.append(Partition(p, arr[lo:hi].tolist(), steps[lo:hi].tolist()))
        self.partitions = topic.partitions

        self.instances = config.instances
        self.slots_per_instance = config.concurrency_per_instance
        self.max_poll_records = config.max_poll_records
        self.member_id = member_ids(self.instances, prefix=name)
        self.alive = [True] * self.instances
        self.incarnation = [0] * self.instances
        self.free_slots = [self.slots_per_instance] * self.instances
        self.limited = [False] * self.instances
        self.waiting: list[deque[int]] = [deque() for _ in range(self.instances)]
        self.assignment: list[int] = [-1] * self.partitions
        self.pending_target: list[int] | None = None
        self.revoke_wait: set[int] = set()
        self.handover: dict[int, int] = {}
        self.resume_at_s = 0.0
        self.stopping: set[int] = set()

        self.heap: list[int] = []
        # Every arrival of the topic in time order, as heap keys, with a sentinel at the end.
        counts = np.diff(topic.start)
        owner_of_row = np.repeat(np.arange(topic.partitions, dtype=np.int64), counts)
        order = np.lexsort((owner_of_row, topic.arrival_s))
        times = topic.arrival_s[order]
        keys = (np.floor(times * TICKS_PER_S).astype(np.int64) << PBITS) | owner_of_row[order]
        self.stream_key = array("q")
        self.stream_key.frombytes(keys.astype(np.int64).tobytes())
        self.stream_key.append(STREAM_END)
        self.stream_t = array("d")
        self.stream_t.frombytes(np.ascontiguousarray(times, dtype=np.float64).tobytes())
        self.stream_i = 0
        self.early_f: list[float] = [-math.inf] * self.partitions
        self.bin_s = bin_s
        self.errors = [0] * (bins + 1)
        self.committed_sum = 0
        self.busy = 0
        self.busy_max = 0
        self.alive_min = self.instances
        self.processed = 0
        self.started_first = 0
        self.never_started_gone = 0
        self.redelivered = 0
        self.duplicate_effects = 0
        self.dedupe_skipped = 0
        self.lost = 0
        self.dead_lettered = 0
        self.model_calls = 0
        self.model_calls_repeated = 0
        self.cache_hits = 0
        self.http_429s = 0
        self.unavailable_errors = 0
        self.step_failures = 0
        self.rebalances = 0
        self.slow_batches = 0
        self.on_rebalance: Callable[[str, float], None] | None = None
        self.faults: FaultHooks | None = None
        self.samples: GroupSamples | None = None
        self.sample_key = STREAM_END
        # Control actions asked for by request_control, due at control_t (key control_key).
        self.control_actions: list[Callable[[float], None]] = []
        self.control_key = STREAM_END
        self.control_t = math.inf

    # ------------------------------------------------------------------ heap helpers

    def _push(self, part: Partition, t: float) -> None:
        part.next_t = t
        heapq.heappush(self.heap, (int(t * TICKS_PER_S) << PBITS) | part.pid)

    def _replace_top(self, part: Partition, t: float) -> None:
        """Replace the heap's top entry (which must be ``part``'s) by ``part`` at ``t``."""
        part.next_t = t
        heapq.heapreplace(self.heap, (int(t * TICKS_PER_S) << PBITS) | part.pid)

    def _rebuild_heap(self) -> None:
        parts = self.parts
        self.heap[:] = [
            (int(q.next_t * TICKS_PER_S) << PBITS) | q.pid
            for q in parts
            if q.state in (ACTIVE, RETRY, POLL) or (q.state == IDLE and not q.stream_wait)
        ]
        heapq.heapify(self.heap)

    # ------------------------------------------------------------------ control plane

    def start(self, t: float = 0.0) -> None:
        """Form the group at ``t``: every live member joins and the first assignment starts."""
        self.rebalance(t, pause_s=0.0, count=False)

    def members(self) -> list[int]:
        """Indexes of the live members, in id order."""
        return [i for i in range(self.instances) if self.alive[i] and i not in self.stopping]

    def settle(self, t: float) -> None:
        """Turn every early-completed step still running at ``t`` back into a step in progress.

        Control events call this first, so a crash aborts such a step and a revocation waits for
        it, exactly as without early completion.
        """
        early = self.early_f
        changed = False
        for p in range(self.partitions):
            f = early[p]
            if f > t:
                changed = True
                early[p] = -math.inf
                part = self.parts[p]
                e = part.pos - 1
                if part.hw == e + 1 and part.first_finish[e] == f:
                    part.first_finish[e] = NAN
                    part.hw = e
                    self.processed -= 1
                if self.commit_mode is CommitMode.after_processing and part.committed == e + 1:
                    part.committed = e
                    self.committed_sum -= 1
                part.cur = e
                part.busy_until = f
                part.next_t = f
                part.state = ACTIVE
                part.stream_wait = False
                self.busy += 1
        if changed:
            self._rebuild_heap()

    def rebalance(self, t: float, pause_s: float = REBALANCE_SYNC_S, count: bool = True) -> None:
        """Recompute the assignment for the live members at ``t`` and hand partitions over.

        Eager strategies revoke every partition and start the new assignment ``pause_s`` after the
        last member finished its batch; cooperative sticky moves only the partitions that change
        owner, each ``pause_s`` after its batch. ``count``: add to ``rebalances`` (the group's first
        formation is not counted).
        """
        self.settle(t)
        live = self.members()
        previous: dict[str, list[tuple[str, int]]] = {}
        for p, owner in enumerate(self.assignment):
            if owner >= 0:
                previous.setdefault(self.member_id[owner], []).append(("events", p))
        ids = [self.member_id[i] for i in live]
        outcome = kafka_rebalance(self.config.assignment, ids, self.partitions, previous)
        index = {m: i for i, m in enumerate(self.member_id)}
        target = [-1] * self.partitions
        for member, tps in outcome.assignment.items():
            for _, p in tps:
                target[p] = index[member]
        if count and live:
            self.rebalances += outcome.rebalances
            if self.on_rebalance is not None:
                self.on_rebalance(self.name, t)
        self.resume_at_s = pause_s
        moving = (
            list(range(self.partitions))
            if self.eager
            else [
                p
                for p in range(self.partitions)
                if target[p] != self.assignment[p] or self.parts[p].state == PARKED
            ]
        )
        self.pending_target = target
        for p in moving:
            part = self.parts[p]
            if part.state in (ACTIVE, RETRY) and part.owner >= 0 and self.alive[part.owner]:
                if part.revoking != REVOKE_STOP:
                    part.revoking = REVOKE_REBALANCE
                self.revoke_wait.add(p)
            else:
                if part.state != PARKED:
                    self._park(part, t)
                self.handover[p] = target[p]
        self._rebuild_heap()
        if self.eager:
            if not self.revoke_wait:
                self._complete_rebalance(t)
        else:
            self._assign_parked(t)

    def crash(self, t: float, instances: Sequence[int], mid_batch: bool = True) -> None:
        """Members ``instances`` die at ``t`` (see the module docstring for what is lost or
        redelivered). With ``mid_batch`` False each stops at the end of its current batches."""
        self.settle(t)
        for i in instances:
            if not self.alive[i] or i in self.stopping:
                continue
            if not mid_batch:
                self.stopping.add(i)
                for part in self.parts:
                    if part.owner == i:
                        if part.state in (ACTIVE, RETRY):
                            part.revoking = REVOKE_STOP
                        else:
                            self._park(part, t)
                self._finish_stop(i)
                continue
            self.alive[i] = False
            self.incarnation[i] += 1
            self.waiting[i].clear()
            for part in self.parts:
                if part.owner == i:
                    self._abort(part, t)
            self.free_slots[i] = self.slots_per_instance
        self._rebuild_heap()
        self._note_alive()
        if self.eager and self.pending_target is not None and not self.revoke_wait:
            self._complete_rebalance(t)

    def restart(self, t: float, instances: Sequence[int]) -> None:
        """Members ``instances`` come back at ``t`` and join: a rebalance starts."""
        joined = False
        for i in instances:
            if not self.alive[i] or i in self.stopping:
                self.alive[i] = True
                self.stopping.discard(i)
                joined = True
        if joined:
            self.rebalance(t)
        self._note_alive()

    def membership_changed(self) -> bool:
        """True when the live members differ from the members of the current assignment."""
        owners = {o for o in self.assignment if o >= 0}
        live = set(self.members())
        return bool(owners - live) or bool(live - owners)

    def auto_commit(self, t: float) -> None:
        """Auto-commit tick at ``t``: each live member commits the positions it has fetched."""
        for part in self.parts:
            if part.owner >= 0 and part.state != PARKED and part.batch_end > part.committed:
                self.committed_sum += part.batch_end - part.committed
                part.committed = part.batch_end

    # ------------------------------------------------------------------ internals (rare paths)

    def _note_alive(self) -> None:
        alive = sum(1 for i in range(self.instances) if self.alive[i] and i not in self.stopping)
        if alive < self.alive_min:
            self.alive_min = alive

    def _release_slot(self, part: Partition, t: float) -> None:
        """Free ``part``'s slot at ``t``: hand it to the instance's longest waiter, if any.

        The caller must not hold a heap entry of another partition at the top of the heap."""
        if not part.slot:
            return
        part.slot = False
        owner = part.owner
        if owner < 0 or not self.alive[owner]:
            return
        queue = self.waiting[owner]
        if queue:
            q = self.parts[queue.popleft()]
            q.state = POLL
            q.slot = True
            self._push(q, t)
        else:
            self.free_slots[owner] += 1

    def _park(self, part: Partition, t: float) -> None:
        """Take ``part`` away from its owner at ``t`` (no abort): out of the heap and slot queue."""
        if part.state == WAIT_SLOT and part.owner >= 0:
            with contextlib.suppress(ValueError):
                self.waiting[part.owner].remove(part.pid)
        self._release_slot(part, t)
        part.stream_wait = False
        part.state = PARKED
        part.owner = -1
        part.revoking = REVOKE_NONE
        part.attempt = 0

    def _abort(self, part: Partition, t: float) -> None:
        """The owner of ``part`` crashed at ``t``: abandon the step in progress, count losses."""
        if part.cur >= 0:
            if part.busy_until <= t:
                self._complete_now(part)
            else:
                self.busy -= 1
                part.pos = part.cur
                part.cur = -1
        done = part.pos
        if part.committed > part.hw and part.committed > done:
            self.lost += part.committed - max(part.hw, done)
            self.never_started_gone += max(0, part.committed - max(part.started_max, part.hw, done))
            part.hw = part.committed
            part.started_max = max(part.started_max, part.committed)
        if part.batch_end > part.refetch_until:
            part.refetch_until = part.batch_end
        if part.revoking == REVOKE_REBALANCE:
            self.revoke_wait.discard(part.pid)
        part.pos = part.committed
        part.batch_end = part.committed
        part.slot = False
        self._park(part, t)

    def _complete_now(self, part: Partition) -> None:
        cur = part.cur
        if cur >= part.hw:
            part.first_finish[cur] = part.busy_until
            part.hw = cur + 1
            self.processed += 1
        part.cur = -1
        self.busy -= 1

    def _finish_stop(self, i: int) -> None:
        if i in self.stopping and not any(p.owner == i for p in self.parts):
            self.stopping.discard(i)
            self.alive[i] = False
            self.incarnation[i] += 1
            self.free_slots[i] = self.slots_per_instance
            self.waiting[i].clear()

    def _revoked(self, part: Partition, t: float) -> None:
        """``part`` finished its batch while being revoked or stopped, at ``t``.

        A revoked member commits on revocation (auto-commit commits its fetched position, which
        equals the processed one at a batch end); a stopping (killed) member commits nothing more.
        """
        reason = part.revoking
        owner = part.owner
        if (
            reason == REVOKE_REBALANCE
            and self.commit_mode is CommitMode.auto
            and part.pos > part.committed
        ):
            self.committed_sum += part.pos - part.committed
            part.committed = part.pos
        self._park(part, t)
        waited = part.pid in self.revoke_wait
        self.revoke_wait.discard(part.pid)
        if reason == REVOKE_STOP:
            self._finish_stop(owner)
        if self.pending_target is None or not (waited or reason == REVOKE_REBALANCE):
            return
        self.handover[part.pid] = self.pending_target[part.pid]
        if self.eager:
            if not self.revoke_wait:
                self._complete_rebalance(t)
        else:
            self._assign_parked(t)

    def _complete_rebalance(self, t: float) -> None:
        """Eager rebalance: every partition is parked; start the pending assignment."""
        target = self.pending_target
        if target is None:
            return
        self.assignment = list(target)
        self.handover.clear()
        self.pending_target = None
        self._apply_assignment(t + self.resume_at_s, range(self.partitions))

    def _assign_parked(self, t: float) -> None:
        """Cooperative: give each parked, handed-over partition to its new owner."""
        target = self.pending_target
        if target is None:
            return
        ready = list(self.handover)
        self.handover.clear()
        for p in ready:
            self.assignment[p] = target[p]
        if not self.revoke_wait:
            self.assignment = list(target)
            self.pending_target = None
        self._apply_assignment(t + self.resume_at_s, ready)

    def _apply_assignment(self, resume_t: float, which: Sequence[int] | range) -> None:
        owned = [0] * self.instances
        for o in self.assignment:
            if o >= 0:
                owned[o] += 1
        slots = self.slots_per_instance
        for i in range(self.instances):
            self.limited[i] = owned[i] > slots
        bsize = [
            max(1, self.max_poll_records // max(1, min(owned[i], slots)))
            for i in range(self.instances)
        ]
        for part in self.parts:
            if part.owner >= 0:
                part.bsize = bsize[part.owner]
        for p in which:
            part = self.parts[p]
            owner = self.assignment[p]
            if part.state != PARKED or owner < 0 or not self.alive[owner]:
                continue
            part.owner = owner
            part.bsize = bsize[owner]
            part.slot = False
            part.cur = -1
            if part.pos < part.n:
                part.state = IDLE
                arrival = part.arrival[part.pos]
                self._push(part, arrival if arrival > resume_t else resume_t)
            else:
                part.state = DONE
        # Recount free slots: partitions mid-batch (cooperative moves leave them) hold one.
        held = [0] * self.instances
        for q in self.parts:
            if q.owner >= 0 and q.state in (ACTIVE, RETRY, POLL):
                q.slot = True
                held[q.owner] += 1
        for i in range(self.instances):
            self.free_slots[i] = slots - held[i]
            queue = self.waiting[i]
            while queue and (self.free_slots[i] > 0 or not self.limited[i]):
                q = self.parts[queue.popleft()]
                q.state = POLL
                q.slot = True
                self.free_slots[i] -= 1
                self._push(q, resume_t)

    def _repeat(self, part: Partition, pos: int, t: float) -> int:
        """A redelivered offset is about to start at ``t``: 0 run it, 1 skip it, 2 zero-time run."""
        if pos < part.hw:
            done_at = part.first_finish[pos]
            fresh = not (t - done_at > self.dedupe_retention_s)
            if self.dedupe is Dedupe.durable_same_transaction and fresh:
                self.dedupe_skipped += 1
                return 1
            if (
                self.dedupe is Dedupe.in_memory
                and fresh
                and part.memory == self._memory_tag(part.owner)
            ):
                self.dedupe_skipped += 1
                return 1
            if not self.tool_keyed:
                self.duplicate_effects += 1
            if self.is_agent:
                if self.faults is not None:
                    how = self.faults.on_repeat(self, part, pos, t, True)
                    if how >= 0:
                        return how
                if self.cache_ttl_s >= 0 and not (t - done_at > self.cache_ttl_s):
                    self.cache_hits += 1
                    return 2
                self.model_calls_repeated += 1
            return 0
        if self.is_agent:
            if self.faults is not None:
                how = self.faults.on_repeat(self, part, pos, t, False)
                if how >= 0:
                    return how
            self.model_calls_repeated += 1
        return 0

    def _memory_tag(self, owner: int) -> int:
        return owner * 1_000_003 + self.incarnation[owner] if owner >= 0 else -1

    def rejected(self, part: Partition, t: float, code: float) -> None:
        """The resource rejected ``part``'s step at ``t`` (``code``): schedule the retry.

        The caller's heap entry for ``part`` must be at the top of the heap."""
        if code == REJECT_429:
            self.http_429s += 1
        else:
            self.unavailable_errors += 1
        self._error_at(t)
        part.attempt += 1
        if self.faults is not None:
            wait = self.faults.retry_wait(self, part, t, code)
            if wait >= 0.0:
                part.state = RETRY
                self._replace_top(part, t + wait)
                return
        limit = self.retry_policy.max_attempts
        if limit is not None and part.attempt >= limit:
            self.step_failed(part, t)
            return
        wait = backoff_seconds(self.retry_policy, part.attempt, self.rng)
        part.state = RETRY
        self._replace_top(part, t + wait)

    def _error_at(self, t: float) -> None:
        b = int(t / self.bin_s)
        if 0 <= b < len(self.errors):
            self.errors[b] += 1

    def step_failed(self, part: Partition, t: float) -> None:
        """The step at ``part.pos`` failed at ``t`` (its in-step retries are spent).

        It is retried under ``failures.retry``; once that limit is reached it is dead-lettered
        (with a dead-letter queue) or dropped and counted as lost, and the partition moves on.
        The caller's heap entry for ``part`` must be at the top of the heap.
        """
        self.step_failures += 1
        part.attempt = 0
        part.failures += 1
        policy = self.failure_policy
        if policy.max_attempts is not None and part.failures >= policy.max_attempts:
            part.failures = 0
            self.give_up(part, t, dead_letter=self.dlq)
            return
        wait = backoff_seconds(policy, part.failures, self.rng)
        part.state = RETRY
        self._replace_top(part, t + wait)

    def give_up(self, part: Partition, t: float, dead_letter: bool, count: bool = True) -> None:
        """Move ``part`` past its event at ``part.pos`` at ``t``: dead-lettered (``dead_letter``)
        or dropped and counted lost (unless ``count`` is False: the caller counted it).

        The caller's heap entry for ``part`` must be at the top of the heap."""
        pos = part.pos
        if dead_letter:
            self.dead_lettered += 1
        elif count and pos >= part.hw:
            self.lost += 1
        if pos >= part.hw:
            part.hw = pos + 1
        if pos >= part.started_max:
            part.started_max = pos + 1
            self.never_started_gone += 1
        part.pos = pos + 1
        part.attempt = 0
        part.failures = 0
        part.state = ACTIVE
        self._replace_top(part, t)
        if self.faults is not None:
            self.faults.on_give_up(self, part, pos, t, dead_letter)

    def poll_interval_exceeded(self, part: Partition, t: float) -> bool:
        """A batch of ``part`` took longer than ``max_poll_interval_ms`` (it ends at ``t``).

        Counted in ``slow_batches``; the faults layer makes the member leave the group and the
        batch redeliver (worked-numbers item 3). Returns True when the batch's commit fails.
        """
        self.slow_batches += 1
        return self.faults is not None and self.faults.on_slow_batch(self, part, t)

    # ------------------------------------------------------------------ data plane

    def advance(self, until: float) -> None:
        """Process every step-event action due at or before ``until`` seconds, in time order.

        Two sources are merged by key: the heap (steps finishing, retries, resumed partitions)
        and the topic's arrivals in time order (``stream_key``), which wake partitions that wait
        for their next record (``Partition.stream_wait``) without any heap operation. On the way
        the group takes its samples (:meth:`set_samples`) and runs the control actions asked
        for with :meth:`request_control` at their sample times, so the outcome does not depend
        on how often the control plane calls this.
        """
        while self._advance(until):
            pass

    def _advance(self, until: float) -> bool:
        """One stretch of :meth:`advance`: True when it stopped for a control action (it ran the
        action; call again to go on to ``until``)."""
        heap = self.heap
        ticks = TICKS_PER_S
        pbits = PBITS
        mask = MASK
        limit_key = (int(until * ticks) << pbits) | mask
        stream_key = self.stream_key
        si = self.stream_i
        if (not heap or heap[0] > limit_key) and stream_key[si] > limit_key:
            return self._catch_up(limit_key)
        # Samples: the common crossing (one fine sample, not a chart one) is taken right here.
        sample_key = self.sample_key
        samples = self.samples
        if samples is not None:
            s_keys, s_i, s_per = samples.keys, samples.i, samples.per_chart
            s_append = samples.started_or_gone.append
        else:  # sample_key is STREAM_END: no crossing ever happens
            s_keys, s_i, s_per, s_append = _NO_KEYS, 0, 1, _NO_LOG.append
        gone_base = self.started_first
        stream_t = self.stream_t
        parts = self.parts
        admit = self.stage.admit
        heapreplace = heapq.heapreplace
        heappop = heapq.heappop
        heappush = heapq.heappush
        commit_after = self.commit_mode is CommitMode.after_processing
        commit_before = self.commit_mode is CommitMode.before_processing
        track_memory = self.dedupe is Dedupe.in_memory
        is_agent = self.is_agent
        mpi = self.max_poll_interval_s
        limited = self.limited
        limited_any = any(limited)
        free_slots = self.free_slots
        waiting = self.waiting
        early_f = self.early_f
        processed = 0
        started = 0
        calls = 0
        csum = self.committed_sum
        busy = self.busy
        busy_max = self.busy_max
        guard_s = STREAM_GUARD_S
        idle = IDLE
        active = ACTIVE
        retry = RETRY
        wait_slot = WAIT_SLOT
        poll_state = POLL
        done = DONE
        while True:
            sk = stream_key[si]
            if heap and heap[0] < sk:
                key = heap[0]
                own = True
            else:
                key = sk
                own = False
            if key > limit_key:
                break
            if key > sample_key:
                if key > self.control_key:
                    break
                s_next = s_keys[s_i + 1]
                if s_next >= key and (s_i + 1) % s_per:
                    s_append(gone_base + started + self.never_started_gone)
                    s_i += 1
                    sample_key = s_next
                else:
                    assert samples is not None
                    samples.i = s_i
                    sample_key = samples.record(self, key, started, busy)
                    s_i = samples.i
            p = key & mask
            part = parts[p]
            if own:
                t = part.next_t
                state = part.state
            else:
                si += 1
                if not part.stream_wait:
                    continue
                part.stream_wait = False
                t = stream_t[si - 1]
                state = idle
            arrival = part.arrival
            n = part.n
            if state == idle:
                # A record arrived for a partition with nothing in progress.
                pos = part.pos
                retried = False
                if limited_any:
                    owner = part.owner
                    if limited[owner]:
                        if free_slots[owner] > 0:
                            free_slots[owner] -= 1
                            part.slot = True
                        else:
                            part.state = wait_slot
                            waiting[owner].append(p)
                            if own:
                                heappop(heap)
                            continue
                poll = True
            else:
                cur = part.cur
                if cur >= 0:
                    # The step in progress finishes now.
                    if cur >= part.hw:
                        part.first_finish[cur] = t
                        part.hw = cur + 1
                        processed += 1
                        if track_memory:
                            part.memory = self._memory_tag(part.owner)
                    part.cur = -1
                    busy -= 1
                pos = part.pos
                retried = state == retry
                poll = False
                if retried:
                    part.state = active
                elif state == active and pos < part.batch_end:
                    pass
                elif state == active:
                    # End of a batch: commit, maybe hand the partition over.
                    owner = part.owner
                    kicked = t - part.batch_t > mpi and self.poll_interval_exceeded(part, t)
                    if commit_after and pos > part.committed and not kicked:
                        csum += pos - part.committed
                        part.committed = pos
                    if part.revoking:
                        heappop(heap)
                        self.busy = busy
                        self.committed_sum = csum
                        self._revoked(part, t)
                        busy = self.busy
                        csum = self.committed_sum
                        continue
                    if limited[owner] and waiting[owner]:
                        # Hand the slot to the longest waiter; queue up again if records remain.
                        q = parts[waiting[owner].popleft()]
                        q.state = poll_state
                        q.slot = True
                        q.next_t = t
                        part.slot = False
                        heapreplace(heap, (int(t * ticks) << pbits) | q.pid)
                        nxt = part.arrived
                        if nxt > pos or (nxt < n and arrival[nxt] <= t):
                            part.state = wait_slot
                            waiting[owner].append(p)
                        elif pos < n:
                            part.state = idle
                            part.stream_wait = True
                        else:
                            part.state = done
                        continue
                    poll = True
                else:
                    poll = True  # POLL: handed a slot
            if poll:
                # Fetch what has arrived, up to the batch size.
                arrived = part.arrived
                while arrived < n and arrival[arrived] <= t:
                    arrived += 1
                part.arrived = arrived
                if arrived <= pos:
                    if part.slot:
                        part.slot = False
                        free_slots[part.owner] += 1
                    if pos < n:
                        part.state = idle
                        part.stream_wait = True
                    else:
                        part.state = done
                    if own:
                        heappop(heap)
                    continue
                batch_end = pos + part.bsize
                if batch_end > arrived:
                    batch_end = arrived
                part.batch_end = batch_end
                part.batch_t = batch_t = t
                if pos < part.refetch_until:
                    refetch = part.refetch_until
                    self.redelivered += (batch_end if batch_end < refetch else refetch) - pos
                if commit_before and batch_end > part.committed:
                    csum += batch_end - part.committed
                    part.committed = batch_end
            else:
                batch_end = part.batch_end
                batch_t = part.batch_t
            # Start the step at offset pos.
            step = part.step[pos]
            started_max = part.started_max
            if pos < started_max or part.fail_attempts is not None:
                if not own:
                    # The rare paths below reschedule through the heap's top entry.
                    part.next_t = t
                    heappush(heap, key)
                    own = True
                if pos < started_max:
                    how = self._repeat(part, pos, t)
                    if how == 1:
                        part.pos = pos + 1
                        part.state = active
                        part.next_t = t
                        continue
                    if how == 2:
                        step = 0.0
                fails = part.fail_attempts
                if fails is not None and pos in fails:
                    left = fails[pos]
                    if left in (PARK, DROP):
                        part.state = active
                        self.give_up(part, t, dead_letter=left == PARK, count=False)
                        continue
                    if left != 0:
                        if left > 0:
                            fails[pos] = left - 1
                        self.unavailable_errors += 1
                        self._error_at(t)
                        part.state = active
                        self.step_failed(part, t)
                        continue
            if step == 0.0:
                finish = t
            else:
                finish = admit(t, step)
                if finish < 0.0:
                    if not own:
                        part.next_t = t
                        heappush(heap, key)
                    part.state = active
                    self.rejected(part, t, finish)
                    continue
                if is_agent:
                    calls += 1
            if pos >= started_max:
                part.first_start[pos] = finish - step
                part.started_max = pos + 1
                started += 1
            if retried or part.failures:
                part.attempt = 0
                part.failures = 0
            nxt = pos + 1
            part.pos = nxt
            if (
                batch_end == nxt
                and (nxt == n or arrival[nxt] >= finish)
                and finish - batch_t <= mpi
                and not part.revoking
                and not (limited_any and limited[part.owner])
            ):
                # Early completion: book the finish and the batch commit now; the partition
                # waits for its next record on the arrival stream.
                if pos >= part.hw:
                    part.first_finish[pos] = finish
                    part.hw = nxt
                    processed += 1
                    if track_memory:
                        part.memory = self._memory_tag(part.owner)
                if commit_after and nxt > part.committed:
                    csum += nxt - part.committed
                    part.committed = nxt
                early_f[p] = finish
                if nxt < n:
                    part.state = idle
                    a = arrival[nxt]
                    if a > t + guard_s:
                        part.stream_wait = True
                    else:
                        # Its arrival may share this instant's key: wake it through the heap.
                        part.next_t = a
                        k = (int(a * ticks) << pbits) | p
                        if own:
                            heapreplace(heap, k)
                        else:
                            heappush(heap, k)
                        continue
                else:
                    part.state = done
                if own:
                    heappop(heap)
                continue
            part.state = active
            part.cur = pos
            part.busy_until = finish
            busy += 1
            if busy > busy_max:
                busy_max = busy
            part.next_t = finish
            if own:
                heapreplace(heap, (int(finish * ticks) << pbits) | p)
            else:
                heappush(heap, (int(finish * ticks) << pbits) | p)
        self.stream_i = si
        self.busy = busy
        self.busy_max = busy_max
        self.committed_sum = csum
        self.processed += processed
        self.started_first += started
        self.model_calls += calls
        if samples is not None:
            samples.i = s_i
        self.sample_key = sample_key
        return self._catch_up(limit_key)

    def _catch_up(self, limit_key: int) -> bool:
        """Every step action up to ``limit_key`` is done: run a control action due by then (after
        the sample at its time; returns True), else take the samples before ``limit_key``."""
        control_key = self.control_key
        if control_key <= limit_key:
            if self.samples is not None:
                self.sample_key = self._take_samples(control_key + 1, 0, self.busy)
            actions, t = self.control_actions, self.control_t
            self.control_actions, self.control_key, self.control_t = [], STREAM_END, math.inf
            for action in actions:
                action(t)
            return True
        if self.sample_key < limit_key:
            self.sample_key = self._take_samples(limit_key, 0, self.busy)
        return False

    def request_control(self, t: float, action: Callable[[float], None]) -> float:
        """Run ``action(at)`` when the data plane reaches the first sample time ``at`` at or
        after ``t`` seconds, right after that sample (``t`` itself without samples); returns
        ``at`` (``math.inf`` past the last sample). The caller makes sure the group is advanced
        that far. For the faults layer: a step action (a batch over ``max_poll_interval_ms``)
        that must change the group as a control event would, at most one sample later."""
        key = int(t * TICKS_PER_S) << PBITS
        if self.samples is None:
            at_key, at = key | MASK, t
        else:
            at_key, at = self.samples.first_at_or_after(key)
        if at == math.inf:
            return at  # past the last sample: the run ends first
        if at_key < self.control_key:
            self.control_key, self.control_t = at_key, at
        self.control_actions.append(action)
        return self.control_t

    def _take_samples(self, key: int, started: int, busy: int) -> int:
        samples = self.samples
        assert samples is not None, "sample_key is STREAM_END while no samples are set"
        return samples.record(self, key, started, busy)

    def finish_samples(self) -> None:
        """Take the samples not taken yet (at the end of the run) and flush them."""
        if self.samples is not None:
            self.sample_key = self.samples.record(self, STREAM_END, 0, self.busy)
            self.samples.flush()

    def set_samples(self, times: np.ndarray, per_chart: int, chart_ends: np.ndarray) -> None:
        """Have the data plane take samples at ``times`` (seconds, ascending) as it goes, a
        chart sample every ``per_chart``-th; ``chart_ends``: each partition's log-end offset at
        each chart time, shape ``(P, len(times) // per_chart)`` (simulator.engine.samples)."""
        limit_keys = (np.floor(times * TICKS_PER_S).astype(np.int64) << PBITS) | MASK
        commit_after = self.commit_mode is CommitMode.after_processing
        self.samples = GroupSamples(
            times, limit_keys, STREAM_END, per_chart, chart_ends, commit_after
        )
        self.sample_key = self.samples.next_key

    # ------------------------------------------------------------------ measurements

    def first_times(self) -> tuple[np.ndarray, np.ndarray]:
        """First start and first finish of every event (seconds, NaN when it never happened),
        each shape ``(n,)`` in topic order (partition, then offset)."""
        empty = np.empty(0, dtype=np.float64)
        starts = [np.frombuffer(q.first_start, dtype=np.float64) for q in self.parts]
        finishes = [np.frombuffer(q.first_finish, dtype=np.float64) for q in self.parts]
        return np.concatenate([empty, *starts]), np.concatenate([empty, *finishes])

    def release(self) -> None:
        """Drop the per-event state (partitions, arrival stream, heap) after the result is built,
        so it is freed at once even while SimPy processes or hooks still reference the group."""
        self.parts = []
        self.heap = []
        self.early_f = []
        self.stream_key = array("q", [STREAM_END])
        self.stream_t = array("d")
        self.stream_i = 0
