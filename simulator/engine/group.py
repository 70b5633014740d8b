"""A consumer group's state: configuration, partitions, members, slots, heap, stream, counters.

:class:`GroupState` is the base of :class:`simulator.engine.consumers.ConsumerGroup`. The group's
behaviour is layered on it by idea, each layer a subclass of the one before:

- ``simulator.engine.membership.Membership``: assignment, rebalances, crashes, restarts, commits
  and instance slots (the control plane's changes to the group);
- ``simulator.engine.retries.Retries``: the rare paths of one step: redelivery and dedupe,
  rejections and retries, failed and given-up events (poison), slow batches;
- ``simulator.engine.consumers.ConsumerGroup``: the data plane (the hot loop), its samples and
  control requests, and the measurements.

This module also says what a group needs from outside: its :class:`Stage` (the shared resource a
step uses) and its :class:`FaultHooks` (the faults layer's named hooks on its rare paths).
"""

from __future__ import annotations

import heapq
import math
import random
from array import array
from collections import deque
from collections.abc import Callable
from typing import Protocol

import numpy as np

from simulator.assignment import member_ids
from simulator.design import (
    AssignmentStrategy,
    CommitMode,
    Dedupe,
    DedupeAt,
    Design,
    IdempotencyKeyFrom,
    RetryPolicy,
)
from simulator.design import ConsumerGroup as GroupConfig
from simulator.engine.eventlog import Topic
from simulator.engine.partition import (
    IDLE,
    MASK,
    PARKED,
    PBITS,
    SLOT_HOLDING,
    STREAM_END,
    TICKS_PER_S,
    Partition,
)
from simulator.engine.samples import GroupSamples
from simulator.engine.world import World


class Stage(Protocol):
    """The shared resource a group's step uses (provider, runner pool, state store)."""

    def admit(self, t: float, step_s: float) -> float:
        """Finish time of a step tried at ``t``, or a negative rejection code."""
        ...

    def add_outage(self, start: float, end: float) -> None:
        """Make the resource unavailable in ``[start, end)``."""
        ...


class FaultHooks(Protocol):
    """The faults layer's named hooks on one group (``simulator.engine.hooks.GroupHooks`` binds
    the installed fault layers to a group).

    Called on rare paths only: a rejected step, a repeated agent step, a batch over
    ``max_poll_interval_ms``, an event given up, an attempt of an event marked ``ASK``.
    """

    def retry_wait(self, part: Partition, t: float, code: float) -> float:
        """Seconds to wait before retrying a rejected step, or -1 for the group's own rule."""
        ...

    def on_repeat(self, part: Partition, pos: int, t: float, completed: bool) -> int:
        """A repeated agent step: 0 call the model, 2 answered without a call, -1 default."""
        ...

    def on_slow_batch(self, part: Partition, t: float) -> bool:
        """A batch over the poll interval ended at ``t``: True when its commit must fail."""
        ...

    def on_give_up(self, part: Partition, pos: int, t: float, dead_lettered: bool) -> None:
        """Offset ``pos`` was given up at ``t`` (dead-lettered or parked, else dropped)."""
        ...

    def failed_attempt(self, part: Partition, pos: int, t: float) -> float:
        """An attempt of an ``ASK`` offset: -1 it goes through, else seconds to the next one."""
        ...


class GroupState:
    """One consumer group (``agent``, ``tool`` or ``state``) over its :class:`Topic`: its state.

    ``stage``: the shared resource each step needs (see :class:`Stage`). ``rng``: the group's own
    ``random.Random`` (retry jitter). ``bins``: number of chart bins of ``bin_s`` seconds for error
    counts. Counters (step events): ``processed`` (first completions), ``redelivered``,
    ``duplicate_effects``, ``dedupe_skipped``, ``lost``, ``dead_lettered``, ``model_calls``,
    ``model_calls_repeated``, ``cache_hits``, ``http_429s``, ``unavailable_errors``,
    ``step_failures``, ``rebalances``, ``slow_batches``; per batch, the largest poll
    (``poll_records_max``, records one partition fetched) and the longest batch
    (``poll_batch_max_s``, seconds from the poll to its last record's end, or to the crash or kick
    that cut it short). ``faults``: the faults layer's hooks on
    the group (None: the engine's own rules only). Raises ``ValueError`` for more than
    ``2 ** PBITS`` partitions.

    The heap holds one int key per scheduled partition, ``(round(t x 1e9) << 12) | partition``
    (nanosecond order; the exact time is ``Partition.next_t``), which compares faster than tuples.
    The arrival stream (``stream_key``, ``stream_t``, cursor ``stream_i``) holds every arrival of
    the topic in time order as such keys, with a sentinel at the end.
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
        self.dedupe_at_effect = is_agent and delivery.dedupe_at is DedupeAt.at_effect
        self.outbox = design.data_model.outbox
        # Offsets of tool calls whose external side effect happened but whose local record (the
        # dedupe row, the offset) a crash stopped: (partition, offset).
        self.external_done: set[tuple[int, int]] = set()
        # Partition-seconds rebalances held partitions from their next batch (revoked until the
        # new assignment resumes them), and since when each revoked one waits.
        self.rebalance_paused_s = 0.0
        self.paused_since: dict[int, float] = {}
        cache = design.model.cache
        self.cache_ttl_s = cache.ttl_hours * 3600.0 if (is_agent and cache.enabled) else -1.0
        self.tool_keyed = (
            name == "tool"
            and design.tools.side_effect_idempotency_key
            and delivery.idempotency_key_from is IdempotencyKeyFrom.event_id
        )
        self.dlq = design.failures.dead_letter_queue.enabled
        self.max_poll_interval_s = config.max_poll_interval_ms / 1000.0
        # What the data plane's hot loop reads of the above on every call, in one tuple (they never
        # change): commit after / in the effect's transaction / before processing, in-memory
        # dedupe, the agent group, max.poll.interval.ms in seconds.
        self.plane_config = (
            self.commit_mode is CommitMode.after_processing,
            self.commit_mode is CommitMode.in_effect_transaction,
            self.commit_mode is CommitMode.before_processing,
            self.dedupe is Dedupe.in_memory,
            is_agent,
            self.max_poll_interval_s,
        )
        self.session_timeout_s = config.session_timeout_ms / 1000.0
        self.eager = config.assignment is not AssignmentStrategy.cooperative_sticky

        if topic.partitions > 1 << PBITS:
            raise ValueError(f"at most {1 << PBITS} partitions, got {topic.partitions}")
        # One conversion of each array, then list slices (a conversion per partition costs more).
        arr: list[float] = topic.arrival_s.tolist()
        steps: list[float] = topic.step_s.tolist()
        start: list[int] = topic.start.tolist()
        self.parts: list[Partition] = []
        for p in range(topic.partitions):
            lo, hi = start[p], start[p + 1]
            self.parts.append(Partition(p, arr[lo:hi], steps[lo:hi]))
        self.partitions = topic.partitions

        self.instances = config.instances
        self.slots_per_instance = config.concurrency_per_instance
        self.max_poll_records = config.max_poll_records
        self.member_id = member_ids(self.instances, prefix=name)
        self.alive = [True] * self.instances
        self.on_join: Callable[[float], None] | None = None
        """Called with the time when a member that was gone joins again (``Membership.restart``):
        the slow-batch watchdog sleeps through a group with no live member and wakes on it."""
        self.incarnation = [0] * self.instances
        self.free_slots = [self.slots_per_instance] * self.instances
        self.limited = [False] * self.instances
        self.limited_any = False
        """Any instance owns more partitions than slots (``any(limited)``)."""
        self.waiting: list[deque[int]] = [deque() for _ in range(self.instances)]
        self.assignment: list[int] = [-1] * self.partitions
        self.pending_target: list[int] | None = None
        self.revoke_wait: set[int] = set()
        self.handover: dict[int, int] = {}
        self.parked: set[int] = set(range(self.partitions))
        """Every PARKED partition, maybe with some that no longer are (a rebalance prunes it)."""
        self.poll_sizes: list[int] = [-1] * self.instances
        """Per member, the poll size (records per partition) its partitions were given last."""
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
        self.dedupe_expired = 0
        self.step_failures = 0
        self.rebalances = 0
        self.slow_batches = 0
        self.poll_records_max = 0
        self.poll_batch_max_s = 0.0
        self.faults: FaultHooks | None = None
        self.samples: GroupSamples | None = None
        self.sample_key = STREAM_END
        # Control actions asked for by request_control, due at control_t (key control_key).
        self.control_actions: list[Callable[[float], None]] = []
        self.control_key = STREAM_END
        self.control_t = math.inf
        # A causal run's producer (simulator.engine.causal.CausalRuns): set, every advance goes
        # through it and each first apply is reported to it.
        self.world: World | None = None
        # The data plane's generator's send, made on first use (ConsumerGroup.plane).
        self._send: Callable[[int], int] | None = None

    def next_key(self) -> int:
        """The key of the next thing the data plane will do: a partition's action, an arrival on
        the stream or a control action asked for (``STREAM_END`` when none)."""
        k = self.heap[0] if self.heap else STREAM_END
        s = self.stream_key[self.stream_i]
        if s < k:
            k = s
        return k if k < self.control_key else self.control_key

    # ------------------------------------------------------------------ heap helpers

    def _push(self, part: Partition, t: float) -> None:
        part.next_t = t
        heapq.heappush(self.heap, (int(t * TICKS_PER_S) << PBITS) | part.pid)

    def _replace_top(self, part: Partition, t: float) -> None:
        """Replace the heap's top entry (which must be ``part``'s) by ``part`` at ``t``."""
        part.next_t = t
        heapq.heapreplace(self.heap, (int(t * TICKS_PER_S) << PBITS) | part.pid)

    def _rebuild_heap(self) -> None:
        self.heap[:] = self._heap_entries()
        heapq.heapify(self.heap)

    def _heap_entries(self) -> list[int]:
        """One key per partition with an action due: in a batch (``SLOT_HOLDING``) or idle with
        a record it has not been woken for, at its ``next_t``."""
        parts = self.parts
        ticks, pbits, idle, busy = TICKS_PER_S, PBITS, IDLE, SLOT_HOLDING
        return [
            (int(q.next_t * ticks) << pbits) | q.pid
            for q in parts
            if q.state in busy or (q.state == idle and not q.stream_wait)
        ]

    @staticmethod
    def _note_entry(part: Partition, keys: list[int]) -> None:
        """Add ``part``'s heap key to ``keys`` if it has an entry (about to be parked)."""
        state = part.state
        if state in SLOT_HOLDING or (state == IDLE and not part.stream_wait):
            keys.append((int(part.next_t * TICKS_PER_S) << PBITS) | part.pid)

    def _drop_entries(self, keys: list[int]) -> None:
        """Take the entries ``keys`` of partitions just parked out of the heap (noted with
        :meth:`_note_entry` before parking): what :meth:`_rebuild_heap` gives, since a crash or a
        rebalance changes no other entry (the waiters it wakes for a slot push their own). A few
        keys are removed one by one (scans in C), many by one pass over the heap."""
        if not keys:
            return
        heap = self.heap
        if len(keys) * 8 <= len(heap):
            try:
                for k in keys:
                    heap.remove(k)
            except ValueError:
                self._drop_parked()
                return
            heapq.heapify(heap)
        else:
            self._drop_parked()

    def _drop_parked(self) -> None:
        """Take every parked partition's entry out of the heap (one pass over the heap)."""
        heap = self.heap
        parts = self.parts
        parked = PARKED
        kept = [k for k in heap if parts[k & MASK].state != parked]
        if len(kept) != len(heap):
            heap[:] = kept
            heapq.heapify(heap)

    # ------------------------------------------------------------------ small helpers

    def _memory_tag(self, owner: int) -> int:
        return owner * 1_000_003 + self.incarnation[owner] if owner >= 0 else -1

    def _error_at(self, t: float) -> None:
        b = int(t / self.bin_s)
        if 0 <= b < len(self.errors):
            self.errors[b] += 1
