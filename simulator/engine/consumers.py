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

The group is built in layers, one idea a module (``simulator.engine.group``: its state;
``membership``: assignment, rebalances, crashes, commits, slots; ``retries``: redelivery, retries,
poison, slow batches); this module is the data plane on top of them. The faults layer acts on a
group through its public methods (``crash``, ``restart``, ``rebalance``, ``settle``,
``request_control``), the stages' ``add_outage``, ``Partition.fail_attempts``, and the named hooks
of :class:`simulator.engine.group.FaultHooks` (see ``simulator.engine.hooks``).
"""

from __future__ import annotations

import heapq
import math
from array import array
from bisect import bisect_right
from collections.abc import Callable, Generator

import numpy as np

from simulator.design import CommitMode
from simulator.engine.partition import (
    ACTIVE,
    DONE,
    IDLE,
    MASK,
    PBITS,
    RETRY,
    STREAM_END,
    STREAM_GUARD_S,
    TICKS_PER_S,
)
from simulator.engine.retries import Retries
from simulator.engine.samples import GroupSamples

# The hot loop's module constants and heapq's functions, bound to its locals in one unpacking each.
_PLANE_CONSTANTS = (TICKS_PER_S, PBITS, MASK, STREAM_GUARD_S, IDLE, ACTIVE, RETRY, DONE)
_HEAP_OPS = (heapq.heapreplace, heapq.heappop, heapq.heappush)


class ConsumerGroup(Retries):
    """One consumer group over its topic: the data plane on the group's state, membership and
    rare step paths (constructor and counters: :class:`simulator.engine.group.GroupState`).

    *Early completion*: when a step is the last of its batch and the partition's next record
    arrives after the step finishes, the step's completion and batch commit are booked when it
    starts and the partition's next heap visit is that arrival (one heap operation per event instead
    of two). ``early_f[p]`` keeps the step's finish; the samples count such steps as still in
    flight (and their commit as not yet made) until then, and :meth:`settle` turns them back into
    steps in progress before any control event looks at the partitions.
    """

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
        if self.world is not None:
            self.world.advance(until)
            return
        self.advance_to_key((int(until * TICKS_PER_S) << PBITS) | MASK)

    def advance_to_key(self, limit_key: int) -> None:
        """:meth:`advance` up to a heap key (every action with a key at or below it), this group
        alone: for the causal producer, which keeps the groups in step."""
        heap = self.heap
        if (
            self.sample_key >= limit_key
            and (not heap or heap[0] > limit_key)
            and self.stream_key[self.stream_i] > limit_key
            and self.control_key > limit_key
        ):
            return  # nothing due and no sample to take (a watchdog's look at an idle group)
        send = self.plane()
        while send(limit_key) < 0:
            self.run_control()

    def samples_to_key(self, limit_key: int) -> None:
        """Take the samples due up to a heap key, as :meth:`advance_to_key` does once it has
        processed every action up to it; with an action due by then, that is what it calls. For
        the causal producer, which appends to the log only once the actions before are done."""
        heap = self.heap
        if (
            (heap and heap[0] <= limit_key)
            or self.stream_key[self.stream_i] <= limit_key
            or self.control_key <= limit_key
        ):
            self.advance_to_key(limit_key)
        elif self.sample_key < limit_key:
            self.sample_key = self._take_samples(limit_key, 0, self.busy)

    def plane(self) -> Callable[[int], int]:
        """The data plane as a function of a limit key: it processes every action with a key at
        or below it and returns the group's next key (:meth:`next_key`), or -1 when it stopped
        for a control action (run it with :meth:`run_control`, then call again).

        It is the ``send`` of a generator (:meth:`_plane`) that keeps the hot loop's locals from
        one call to the next, so a call that does one or two actions (a causal run advances the
        groups a 20 ms tick at a time) does not pay for setting them up again."""
        send = self._send
        if send is None:
            plane = self._plane()
            next(plane)
            send = self._send = plane.send
        return send

    def run_control(self) -> None:
        """Run the control actions asked for with :meth:`request_control`, which are due (the
        data plane returned -1), after the sample at their time."""
        control_key = self.control_key
        if self.samples is not None:
            self.sample_key = self._take_samples(control_key + 1, 0, self.busy)
        actions, t = self.control_actions, self.control_t
        self.control_actions, self.control_key, self.control_t = [], STREAM_END, math.inf
        for action in actions:
            action(t)

    def _plane(self) -> Generator[int, int, None]:  # noqa: C901 (the hot loop; see the comments)
        """The generator behind :meth:`plane`: each ``send(limit_key)`` is one stretch of
        :meth:`advance_to_key`. What the control plane may change between two stretches (the
        counters, the samples' next key, the stage, ``limited_any``) is read again at the start
        of each and stored back at its end, as a plain call would."""
        # The hot loop runs once per step action. Its local names alias attributes, functions and
        # module constants (a local is read faster than an attribute or a global):
        #
        #   heap, parts, admit        the group's heap of keys, its partitions, its stage's admit
        #   stream_key, stream_t, si  the arrival stream (keys, times) and its cursor (the next
        #                             arrival; stored back in ``stream_i`` on exit)
        #   ticks, pbits, mask        TICKS_PER_S, PBITS, MASK: a key is (ns << pbits) | partition
        #   limit_key                 the key of ``until`` with every partition bit set
        #   sample_key, samples       limit key of the next sample; the group's GroupSamples
        #   gone_base                 started_first on entry (``started`` is added to it on exit)
        #   processed, started, calls first completions, first starts and model calls of this
        #                             stretch (added to the group's counters on exit)
        #   csum, busy, busy_max      committed_sum, busy, busy_max: kept here, stored back on exit
        #                             and around a method that reads or changes them
        #   records_max, took_max     poll_records_max, poll_batch_max_s: the largest poll and the
        #                             longest batch so far (stored back on exit)
        #   commit_after, commit_each, commit_before  the commit mode
        #   track_memory, is_agent, mpi  in-memory dedupe, the agent group, max_poll_interval_s
        #                             (these six: the group's ``plane_config``, fixed at its start)
        #   limited, limited_any      per instance: it owns more partitions than slots (any does)
        #   free_slots, waiting       per instance: free slots, partitions queued for one
        #   early_f                   per partition: the finish of its early-completed step
        #   guard_s                   STREAM_GUARD_S
        #   idle, active, retry, done the partition states
        #   heapreplace, heappop, heappush  heapq's functions
        #
        # Per action: key (a heap or stream key), own (key is the heap's top entry; False: an
        # arrival on the stream), p and part (the partition), t (the action's time), state,
        # arrival and n (the partition's arrival times and size), pos (next offset to start), cur
        # (the offset in progress), retried (a retry is due), poll (fetch a batch first),
        # batch_end and batch_t (the batch's end offset and fetch time), step (seconds), fails
        # (the partition's fail_attempts), finish (finish time), nxt (the offset after pos), a
        # (its arrival time).
        #
        # Rare paths are methods of their own: _wait_for_slot and _hand_over_slot (an instance
        # with more partitions than slots), _revoke_at_batch_end (a rebalance or a stopping
        # member), poll_interval_exceeded (a slow batch), _count_redelivered and _start_rare (a
        # redelivered offset, one marked to fail: poison, a lost broker write), _reject (the
        # stage rejected the step: retry).
        ticks, pbits, mask, guard_s, idle, active, retry, done = _PLANE_CONSTANTS
        heapreplace, heappop, heappush = _HEAP_OPS
        heap = self.heap
        stream_key = self.stream_key
        stream_t = self.stream_t
        parts = self.parts
        commit_after, commit_each, commit_before, track_memory, is_agent, mpi = self.plane_config
        commit_done = commit_after or commit_each  # a step's finish ends its batch's commit
        limited = self.limited
        free_slots = self.free_slots
        waiting = self.waiting
        early_f = self.early_f
        world = self.world
        causal = world is not None
        never = STREAM_END
        limit_key = yield 0
        while True:
            si = self.stream_i
            sample_key = self.sample_key
            samples = self.samples  # None only with sample_key STREAM_END: no crossing happens
            gone_base = self.started_first
            admit = self.stage.admit
            limited_any = self.limited_any
            processed = 0
            started = 0
            calls = 0
            csum = self.committed_sum
            busy = self.busy
            busy_max = self.busy_max
            records_max = self.poll_records_max
            took_max = self.poll_batch_max_s
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
                    assert samples is not None
                    sample_key = samples.record(
                        key, gone_base + started + self.never_started_gone, busy
                    )
                p = key & mask
                part = parts[p]
                if own:
                    t = part.next_t
                    state = part.state
                else:
                    if not part.stream_wait:
                        si += 1
                        continue
                    t = stream_t[si]
                    si += 1
                    part.stream_wait = False
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
                                self._wait_for_slot(part, own)
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
                            if world is not None:  # causal: a native call, no bound method
                                world.applied(part.ev[cur], t)
                        elif causal and world.unpublished:  # type: ignore[union-attr]
                            # A step run again publishes what its first run's lost publish did not.
                            world.republish(part.ev[cur], t)  # type: ignore[union-attr]
                        if commit_each and cur >= part.committed:
                            csum += cur + 1 - part.committed
                            part.committed = cur + 1
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
                        took = t - part.batch_t
                        if took > took_max:
                            took_max = took
                        kicked = took > mpi and self.poll_interval_exceeded(part, t)
                        if commit_after and pos > part.committed and not kicked:
                            csum += pos - part.committed
                            part.committed = pos
                        if part.revoking:
                            busy, csum = self._revoke_at_batch_end(part, t, busy, csum)
                            continue
                        if limited[part.owner] and waiting[part.owner]:
                            self._hand_over_slot(part, t)
                            continue
                        poll = True
                    else:
                        poll = True  # POLL: handed a slot
                if poll:
                    # Fetch what has arrived, up to the batch size.
                    arrived = part.arrived
                    if arrived < n and arrival[arrived] <= t:
                        # One more has arrived; a binary search finds the rest (arrivals ascend).
                        arrived += 1
                        if arrived < n and arrival[arrived] <= t:
                            arrived = bisect_right(arrival, t, arrived + 1, n)
                        part.arrived = arrived
                    if arrived <= pos:
                        if part.slot:
                            part.slot = False
                            free_slots[part.owner] += 1
                        if pos < n or causal:
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
                    if batch_end - pos > records_max:
                        records_max = batch_end - pos
                    if pos < part.refetch_until:
                        self._count_redelivered(part, pos, batch_end)
                    if commit_before and batch_end > part.committed:
                        csum += batch_end - part.committed
                        part.committed = batch_end
                else:
                    batch_end = part.batch_end
                    batch_t = part.batch_t
                # Start the step at offset pos.
                step = part.step[pos]
                started_max = part.started_max
                fails = part.fail_attempts
                if pos < started_max or (fails is not None and pos in fails):
                    rare_step = self._start_rare(part, pos, t, key, own, step)
                    own = True  # _start_rare leaves the partition's entry at the heap's top
                    if rare_step is None:
                        continue
                    step = rare_step
                if step == 0.0:
                    finish = t
                else:
                    finish = admit(t, step)
                    if finish < 0.0:
                        self._reject(part, t, key, own, finish)
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
                    and not causal
                    and (nxt == n or arrival[nxt] >= finish)
                    and finish - batch_t <= mpi
                    and not part.revoking
                    and not (limited_any and limited[part.owner])
                ):
                    # Early completion: book the finish and the batch commit now; the partition
                    # waits for its next record on the arrival stream.
                    if finish - batch_t > took_max:
                        took_max = finish - batch_t
                    if pos >= part.hw:
                        part.first_finish[pos] = finish
                        part.hw = nxt
                        processed += 1
                        if track_memory:
                            part.memory = self._memory_tag(part.owner)
                    if commit_done and nxt > part.committed:
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
            self.poll_records_max = records_max
            self.poll_batch_max_s = took_max
            self.committed_sum = csum
            self.processed += processed
            self.started_first += started
            self.model_calls += calls
            # Caught up to limit_key: a control action due stops here (the caller runs it);
            # else take the samples before limit_key and return the next key.
            control_key = self.control_key
            if control_key <= limit_key:
                self.sample_key = sample_key
                limit_key = yield -1
                continue
            if sample_key < limit_key:
                assert samples is not None
                sample_key = samples.record(
                    limit_key, self.started_first + self.never_started_gone, busy
                )
            self.sample_key = sample_key
            nxt_key = heap[0] if heap else never
            if stream_key[si] < nxt_key:
                nxt_key = stream_key[si]
            limit_key = yield nxt_key if nxt_key < control_key else control_key

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
        return samples.record(key, self.started_first + started + self.never_started_gone, busy)

    def finish_samples(self) -> None:
        """Take the samples not taken yet (at the end of the run) and flush them."""
        if self.samples is not None:
            self.sample_key = self._take_samples(STREAM_END, 0, self.busy)
            self.samples.flush()

    def set_samples(self, times: np.ndarray, per_chart: int, chart_ends: np.ndarray | None) -> None:
        """Have the data plane take samples at ``times`` (seconds, ascending) as it goes, a
        chart sample every ``per_chart``-th; ``chart_ends``: each partition's log-end offset at
        each chart time, shape ``(P, len(times) // per_chart)`` (simulator.engine.samples)."""
        limit_keys = (np.floor(times * TICKS_PER_S).astype(np.int64) << PBITS) | MASK
        commit_after = self.commit_mode is CommitMode.after_processing
        self.samples = GroupSamples(
            times,
            limit_keys,
            STREAM_END,
            per_chart,
            chart_ends,
            commit_after,
            self.parts,
            self.early_f,
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

    def settled(self) -> np.ndarray:
        """Per event, in topic order (as :meth:`first_times`), shape ``(n,)`` bool: True when its
        partition has moved past it for good (completed at least once, or given up: lost,
        dead-lettered, skipped), i.e. its offset is below the partition's ``hw``. An event not
        settled and not finished is still waiting for its consumer."""
        empty = np.empty(0, dtype=bool)
        return np.concatenate([empty, *(np.arange(q.n) < q.hw for q in self.parts)])

    def release(self) -> None:
        """Drop the per-event state (partitions, arrival stream, heap) after the result is built,
        so it is freed at once even while SimPy processes or hooks still reference the group."""
        if self.samples is not None:
            self.samples.release()
        self._send = None  # the generator holds the partitions (and the group) too
        self.parts = []
        self.heap = []
        self.early_f = []
        self.stream_key = array("q", [STREAM_END])
        self.stream_t = array("d")
        self.stream_i = 0
