"""The rare paths of one step: redelivery and dedupe, rejections, retries, poison, slow batches.

The data plane (``simulator.engine.consumers``) calls these only off its common path:

- **Redelivery** (:meth:`Retries._repeat`): an offset fetched again after a crash, a kick or a
  replay. ``durable_same_transaction`` dedupe skips every record already applied (within
  ``dedupe_key_retention_hours``); ``in_memory`` skips it only when the member that applied it is
  still the same live process; ``none`` applies it again (a *duplicate effect*, unless a tool call
  carries an idempotency key derived from the event id). A repeated agent step is a repeated model
  call (and its tokens) unless the response cache holds its answer (within ``cache.ttl_hours``),
  in which case it takes no time and no call; the faults layer's ``on_repeat`` hook decides first.
- **Retries** (:meth:`Retries.rejected`): a step the resource rejects (HTTP 429 or unavailable) is
  retried by the same consumer with backoff: the model's retry policy for agent steps,
  ``failures.retry`` for tool calls and state writes (the faults layer's ``retry_wait`` may make a
  rejection transient). When the model policy's attempts run out the step has *failed*
  (:meth:`Retries.step_failed`); a failed step is retried under ``failures.retry`` and, when that
  limit is reached too, dead-lettered (with a dead-letter queue) or dropped (counted as lost).
- **Poison and other per-event failures**: ``Partition.fail_attempts`` maps an offset to the
  attempts that fail (``simulator.engine.partition.EVERY_ATTEMPT``: all of them), to ``PARK`` /
  ``DROP``, given up at once (:meth:`Retries.give_up`), or to ``ASK``: the faults layer's
  ``failed_attempt`` decides each attempt (a failure that clears after a while) and names the
  wait before the next one. A failed attempt counts toward ``failures.retry`` like any other.
- **Slow batches** (:meth:`Retries.poll_interval_exceeded`): a batch that took longer than
  ``max_poll_interval_ms``; the faults layer may kick its member.
"""

from __future__ import annotations

import heapq

from simulator.design import Dedupe
from simulator.engine.membership import Membership
from simulator.engine.partition import ACTIVE, ASK, DROP, PARK, RETRY, Partition
from simulator.engine.provider import REJECT_429, backoff_seconds


class Retries(Membership):
    """A consumer group's rare step paths (see the module docstring)."""

    def _repeat(self, part: Partition, pos: int, t: float) -> int:
        """A redelivered offset is about to start at ``t``: 0 run it, 1 skip it, 2 zero-time run."""
        if pos < part.hw:
            done_at = part.first_finish[pos]
            fresh = not (t - done_at > self.dedupe_retention_s)
            if self.dedupe is Dedupe.durable_same_transaction and not fresh:
                self.dedupe_expired += 1
            if self.dedupe is Dedupe.durable_same_transaction and fresh:
                self.dedupe_skipped += 1
                if self.dedupe_at_effect:
                    # Recognised only when its effect is written: the model is called first.
                    return self._called_again(part, pos, t, completed=True)
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
                return self._called_again(part, pos, t, completed=True)
            return 0
        if self.is_agent:
            return self._called_again(part, pos, t, completed=False)
        if self.external_done and (part.pid, pos) in self.external_done:
            # Its tool call reached the outside world before the crash; done again unless the
            # call carries an idempotency key the tool recognises.
            self.external_done.discard((part.pid, pos))
            if not self.tool_keyed:
                self.duplicate_effects += 1
        return 0

    def _skip_recognised(self, part: Partition, pos: int, t: float) -> int:
        """Dedupe skipped the redelivered offset before ``pos`` at ``t``: skip the offsets from
        ``pos`` on that :meth:`_repeat` would skip too (applied, recognised by dedupe) in one go,
        up to the batch's end, and return the first one left. Each takes no time, so this is the
        same as one heap visit each, without them: a storm's member, kicked again and again,
        refetches the whole batch from its committed offset every time (each skipped offset is
        counted in ``dedupe_skipped``)."""
        end = min(part.batch_end, part.started_max, part.hw)
        if pos >= end:
            return pos
        if self.dedupe is Dedupe.durable_same_transaction:
            if self.dedupe_at_effect:
                return pos
        elif not (self.dedupe is Dedupe.in_memory and part.memory == self._memory_tag(part.owner)):
            return pos
        retention = self.dedupe_retention_s
        finish = part.first_finish
        q = pos
        while q < end and not (t - finish[q] > retention):
            q += 1
        self.dedupe_skipped += q - pos
        return q

    def _deduped(self, part: Partition, pos: int, t: float) -> bool:
        """True when durable dedupe recognises the completed offset ``pos`` at ``t`` (within the
        key retention): its effect is not applied again."""
        return self.dedupe is Dedupe.durable_same_transaction and not (
            t - part.first_finish[pos] > self.dedupe_retention_s
        )

    def _called_again(self, part: Partition, pos: int, t: float, completed: bool) -> int:
        """A repeated agent step calls the model unless a cached or recorded answer serves it
        (the faults layer's ``on_repeat``, then the engine's cache rule): 0 it runs (counted in
        ``model_calls_repeated``), 2 a zero-time answer."""
        if self.faults is not None:
            how = self.faults.on_repeat(part, pos, t, completed)
            if how >= 0:
                return how
        cached = completed and self.cache_ttl_s >= 0
        if cached and not (t - part.first_finish[pos] > self.cache_ttl_s):
            self.cache_hits += 1
            return 2
        self.model_calls_repeated += 1
        return 0

    def rejected(self, part: Partition, t: float, code: float) -> None:
        """The resource rejected ``part``'s step at ``t`` (``code``): schedule the retry.

        The caller's heap entry for ``part`` must be at the top of the heap. A refused attempt
        of a redelivered step calls nothing and applies nothing: what :meth:`_repeat` counted
        for it (a repeated model call, a duplicate effect) is taken back, so that a repeat is
        counted once, when its call goes through."""
        if code == REJECT_429:
            self.http_429s += 1
        else:
            self.unavailable_errors += 1
        pos = part.pos
        if pos < part.started_max:
            if self.is_agent:
                self.model_calls_repeated -= 1
            if pos < part.hw and not self.tool_keyed and not self._deduped(part, pos, t):
                self.duplicate_effects -= 1
        self._error_at(t)
        part.attempt += 1
        if self.faults is not None:
            wait = self.faults.retry_wait(part, t, code)
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

    def step_failed(self, part: Partition, t: float, wait: float | None = None) -> None:
        """The step at ``part.pos`` failed at ``t`` (its in-step retries are spent).

        It is retried under ``failures.retry`` (after ``wait`` seconds when given, else the
        policy's backoff drawn from the group's generator); once that limit is reached it is
        dead-lettered (with a dead-letter queue) or dropped and counted as lost, and the
        partition moves on. The caller's heap entry for ``part`` must be at the top of the heap.
        """
        self.step_failures += 1
        part.attempt = 0
        part.failures += 1
        policy = self.failure_policy
        if policy.max_attempts is not None and part.failures >= policy.max_attempts:
            part.failures = 0
            self.give_up(part, t, dead_letter=self.dlq)
            return
        if wait is None:
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
            self.faults.on_give_up(part, pos, t, dead_letter)

    def poll_interval_exceeded(self, part: Partition, t: float) -> bool:
        """A batch of ``part`` took longer than ``max_poll_interval_ms`` (it ends at ``t``).

        Counted in ``slow_batches``; the faults layer makes the member leave the group and the
        batch redeliver (worked-numbers item 3). Returns True when the batch's commit fails.
        """
        self.slow_batches += 1
        return self.faults is not None and self.faults.on_slow_batch(part, t)

    # ------------------------------------------------------------------ the data plane's rare paths

    def _count_redelivered(self, part: Partition, pos: int, batch_end: int) -> None:
        """A batch ``[pos, batch_end)`` of ``part`` was fetched below ``refetch_until``: count the
        offsets fetched before as redelivered."""
        refetch = part.refetch_until
        self.redelivered += (batch_end if batch_end < refetch else refetch) - pos

    def _start_rare(
        self, part: Partition, pos: int, t: float, key: int, own: bool, step: float
    ) -> float | None:
        """Start the step at ``pos`` of ``part`` at ``t`` when it is redelivered (below
        ``started_max``) or its offset is in ``fail_attempts``; ``step``: its seconds.

        Unless ``own`` (the partition's entry is at the heap's top), its arrival-stream ``key`` is
        pushed, which puts it at the top. Returns the seconds the step takes (0.0 when answered
        without a model call), or None when it was dealt with here (skipped by dedupe, given up,
        or failed and scheduled to retry).
        """
        if not own:
            part.next_t = t
            heapq.heappush(self.heap, key)
        if pos < part.started_max:
            how = self._repeat(part, pos, t)
            if how == 1:
                part.pos = self._skip_recognised(part, pos + 1, t)
                part.state = ACTIVE
                part.next_t = t
                return None
            if how == 2:
                step = 0.0
        fails = part.fail_attempts
        if fails is not None and pos in fails:
            left = fails[pos]
            if left in (PARK, DROP):
                part.state = ACTIVE
                self.give_up(part, t, dead_letter=left == PARK, count=False)
                return None
            if left == ASK:
                wait = -1.0 if self.faults is None else self.faults.failed_attempt(part, pos, t)
                if wait < 0.0:
                    return step
                self.unavailable_errors += 1
                self._error_at(t)
                part.state = ACTIVE
                self.step_failed(part, t, wait)
                return None
            if left != 0:
                if left > 0:
                    fails[pos] = left - 1
                self.unavailable_errors += 1
                self._error_at(t)
                part.state = ACTIVE
                self.step_failed(part, t)
                return None
        return step

    def _reject(self, part: Partition, t: float, key: int, own: bool, code: float) -> None:
        """The stage rejected the step of ``part`` at ``t`` with ``code``: the partition's entry
        goes to the heap's top (``key`` is pushed unless ``own``) and the retry is scheduled
        (:meth:`rejected`)."""
        if not own:
            part.next_t = t
            heapq.heappush(self.heap, key)
        part.state = ACTIVE
        self.rejected(part, t, code)
