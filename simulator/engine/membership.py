"""Who consumes what: a group's assignment, rebalances, crashes, restarts, commits and slots.

The control plane's changes to a consumer group (``simulator.engine.consumers`` for the model):

- :meth:`Membership.rebalance`: eager strategies (range, round robin) revoke every partition; each
  member finishes the batch it is processing, commits, and only when all have done so does the new
  assignment start, after :data:`REBALANCE_SYNC_S` (join and sync). Cooperative sticky revokes
  only the partitions that move; each moves as soon as its batch is done.
- :meth:`Membership.crash`: the member's in-progress step is abandoned, nothing more is committed,
  and its partitions wait for a new owner, which polls from the committed offset (what it had
  fetched after it is redelivered; what a committed offset that ran ahead skipped is lost). With
  ``mid_batch = False`` the member stops at the end of its current batches instead.
- :meth:`Membership.restart`: members come back and join (a rebalance).
- :meth:`Membership.auto_commit`: an auto-commit tick commits every member's fetched positions.
- Instance slots: an instance works on at most ``concurrency_per_instance`` partitions at once;
  when it owns more, partitions with records queue for a slot first come first served.

Every control event first calls :meth:`Membership.settle`, so steps the data plane completed early
are back in progress before the group changes.
"""

from __future__ import annotations

import contextlib
import heapq
import math
from collections import Counter
from collections.abc import Sequence
from itertools import compress

from simulator.assignment import REBALANCE_SYNC_S, completed_assignment, sticky_owners
from simulator.design import CommitMode
from simulator.engine.group import GroupState
from simulator.engine.partition import (
    ACTIVE,
    DONE,
    IDLE,
    MASK,
    NAN,
    PARKED,
    PBITS,
    POLL,
    RETRY,
    REVOKE_NONE,
    REVOKE_REBALANCE,
    REVOKE_STOP,
    SLOT_HOLDING,
    TICKS_PER_S,
    WAIT_SLOT,
    Partition,
)


class Membership(GroupState):
    """A consumer group's membership and ownership (see the module docstring)."""

    # ------------------------------------------------------------------ control plane

    def start(self, t: float = 0.0) -> None:
        """Form the group at ``t``: every live member joins and the first assignment starts."""
        self.rebalance(t, pause_s=0.0, count=False)

    def members(self) -> list[int]:
        """Indexes of the live members, in id order."""
        live = list(compress(range(self.instances), self.alive))
        stopping = self.stopping
        return [i for i in live if i not in stopping] if stopping else live

    def settle(self, t: float) -> None:
        """Turn every early-completed step still running at ``t`` back into a step in progress.

        Control events call this first, so a crash aborts such a step and a revocation waits for
        it, exactly as without early completion.
        """
        early = self.early_f
        if not early or max(early) <= t:
            return  # no early-booked step runs past t (a pass in C, not in Python)
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
        if self.eager:
            # Range and round robin place by member id alone (what was owned does not count).
            ids = [self.member_id[i] for i in live]
            assignment, rounds = completed_assignment(self.config.assignment, ids, self.partitions)
            index = {m: i for i, m in enumerate(self.member_id)}
            target = [-1] * self.partitions
            for member, tps in assignment.items():
                for _, p in tps:
                    target[p] = index[member]
        else:
            # Member ids sort as their indexes (member_ids): the assignor in integers.
            target, rounds, dealt = sticky_owners(self.partitions, live, self.assignment)
        if count and live:
            self.rebalances += rounds
        self.resume_at_s = pause_s
        if self.eager:
            moving: Sequence[int] = range(self.partitions)
        else:
            # The partitions whose owner changes (only dealt ones can) and the parked ones, in
            # partition order.
            parts, owners = self.parts, self.assignment
            parked = {p for p in self.parked if parts[p].state == PARKED}
            self.parked = parked
            moving = sorted(parked.union([p for p in dealt if target[p] != owners[p]]))
        self.pending_target = target
        unheaped: list[int] = []
        for p in moving:
            part = self.parts[p]
            if part.state in (ACTIVE, RETRY) and part.owner >= 0 and self.alive[part.owner]:
                if part.revoking != REVOKE_STOP:
                    part.revoking = REVOKE_REBALANCE
                self.revoke_wait.add(p)
            else:
                if part.state != PARKED:
                    self._note_entry(part, unheaped)
                    self._park(part, t)
                self.paused_since.setdefault(p, t)
                self.handover[p] = target[p]
        self._drop_entries(unheaped)
        if self.eager:
            if not self.revoke_wait:
                self._complete_rebalance(t)
        else:
            self._assign_parked(t)

    def crash(self, t: float, instances: Sequence[int], mid_batch: bool = True) -> None:
        """Members ``instances`` die at ``t`` (see the module docstring for what is lost or
        redelivered). With ``mid_batch`` False each stops at the end of its current batches."""
        self.settle(t)
        unheaped: list[int] = []
        # Each crashing member's partitions, in partition order: one pass over the partitions.
        owned: dict[int, list[Partition]] = {i: [] for i in instances}
        if mid_batch:
            for part in self.parts:
                mine = owned.get(part.owner)
                if mine is not None:
                    mine.append(part)
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
                            self._note_entry(part, unheaped)
                            self._park(part, t)
                self._finish_stop(i)
                continue
            self.alive[i] = False
            self.incarnation[i] += 1
            self.waiting[i].clear()
            for part in owned[i]:
                self._note_entry(part, unheaped)
                self._abort(part, t)
            self.free_slots[i] = self.slots_per_instance
        self._drop_entries(unheaped)
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
            if self.on_join is not None:
                self.on_join(t)
        self._note_alive()

    def hold(self, t: float, member: int, seconds: float) -> None:
        """Member ``member`` stops for ``seconds`` from ``t`` (a pause, not a crash): each step it
        has in progress ends ``seconds`` later. Its idle partitions are not held (a record that
        arrives during the pause may start on time: an approximation of a short pause)."""
        self.settle(t)
        for part in self.parts:
            if part.owner == member and part.state == ACTIVE and part.cur >= 0:
                part.busy_until += seconds
                part.next_t = part.busy_until
        self._rebuild_heap()

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
        stopping = self.stopping
        alive = self.alive.count(True) - sum(1 for i in stopping if self.alive[i])
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
        self.parked.add(part.pid)
        part.owner = -1
        part.revoking = REVOKE_NONE
        part.attempt = 0

    def _abort(self, part: Partition, t: float) -> None:
        """The owner of ``part`` crashed at ``t``: abandon the step in progress, count losses.

        A step that ends as its member dies (an ``after_effect`` crash) has written its effect
        and not its offset. For a tool call the effect is outside the database: the call was made
        but its local record (dedupe row, offset) was not, so the step runs again when redelivered
        (``external_done``). Otherwise the step's transaction committed; without an outbox the
        service dies between that commit and publishing the next step's event, which is lost (the
        dual write); with the offset stored in the effect's transaction the offset is committed
        with it. A batch in progress counts in ``poll_batch_max_s`` up to ``t``."""
        if part.state in (ACTIVE, RETRY) and t - part.batch_t > self.poll_batch_max_s:
            self.poll_batch_max_s = t - part.batch_t
        if part.cur >= 0:
            if part.busy_until <= t and self.name == "tool":
                self.external_done.add((part.pid, part.cur))
                self.busy -= 1
                part.pos = part.cur
                part.cur = -1
            elif part.busy_until <= t:
                self._complete_now(part, dying=True)
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

    def _complete_now(self, part: Partition, dying: bool = False) -> None:
        """The step in progress of ``part`` completes at its end (``dying``: as its member dies,
        before anything after the step's transaction: see :meth:`_abort`)."""
        cur = part.cur
        if cur >= part.hw:
            part.first_finish[cur] = part.busy_until
            part.hw = cur + 1
            self.processed += 1
            if self.world is not None:
                publish = self.outbox or not dying
                self.world.applied(part.ev[cur], part.busy_until, publish)
        if self.commit_mode is CommitMode.in_effect_transaction and cur + 1 > part.committed:
            self.committed_sum += cur + 1 - part.committed
            part.committed = cur + 1
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
        if reason == REVOKE_REBALANCE:
            self.paused_since.setdefault(part.pid, t)
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
        counts = Counter(self.assignment)
        owned = [counts.get(i, 0) for i in range(self.instances)]
        slots = self.slots_per_instance
        # In place: the data plane holds these lists (and free_slots below) by reference.
        self.limited[:] = [n > slots for n in owned]
        self.limited_any = any(self.limited)
        records = self.max_poll_records
        # A poll's records per partition, by partitions owned (few distinct counts: one table).
        table = [max(1, records // max(1, min(n, slots))) for n in range(max(owned, default=0) + 1)]
        bsize = [table[n] for n in owned]
        parts = self.parts
        for p in which:
            part = self.parts[p]
            owner = self.assignment[p]
            if part.state != PARKED or owner < 0 or not self.alive[owner]:
                continue
            since = self.paused_since.pop(p, None)
            if since is not None and resume_t > since:
                self.rebalance_paused_s += resume_t - since
            part.owner = owner
            part.bsize = bsize[owner]
            part.slot = False
            part.cur = -1
            self.parked.discard(p)
            if part.pos < part.n:
                part.state = IDLE
                arrival = part.arrival[part.pos]
                self._push(part, arrival if arrival > resume_t else resume_t)
            else:
                part.state = DONE
        # The poll size of the partitions of every member whose size changed (the others and
        # those just assigned have theirs).
        last = self.poll_sizes
        changed = {o for o, (new, old) in enumerate(zip(bsize, last, strict=True)) if new != old}
        if changed:
            for q in parts:
                if q.owner in changed:
                    q.bsize = bsize[q.owner]
        self.poll_sizes = bsize
        # A recount of free slots: partitions mid-batch (cooperative moves leave them) hold one.
        # Each has its entry in the heap (partition.py), so only those are visited.
        held = [0] * self.instances
        in_progress = SLOT_HOLDING
        for k in self.heap:
            q = parts[k & MASK]
            o = q.owner
            if o >= 0 and q.state in in_progress:
                q.slot = True
                held[o] += 1
        free_slots = self.free_slots
        free_slots[:] = [slots - n for n in held]
        limited = self.limited
        for i, queue in enumerate(self.waiting):
            while queue and (free_slots[i] > 0 or not limited[i]):
                q = parts[queue.popleft()]
                q.state = POLL
                q.slot = True
                free_slots[i] -= 1
                self._push(q, resume_t)

    # ------------------------------------------------------------------ the data plane's rare paths

    def _wait_for_slot(self, part: Partition, own: bool) -> None:
        """A record arrived for idle ``part`` and its instance has no free slot: queue for one.
        ``own``: the partition's entry is at the heap's top (it is removed)."""
        part.state = WAIT_SLOT
        self.waiting[part.owner].append(part.pid)
        if own:
            heapq.heappop(self.heap)

    def _hand_over_slot(self, part: Partition, t: float) -> None:
        """The batch of ``part`` ended at ``t`` while partitions of its instance wait for a slot:
        the longest waiter takes the slot (its entry replaces ``part``'s at the heap's top), and
        ``part`` queues again if records remain."""
        queue = self.waiting[part.owner]
        q = self.parts[queue.popleft()]
        q.state = POLL
        q.slot = True
        q.next_t = t
        part.slot = False
        heapq.heapreplace(self.heap, (int(t * TICKS_PER_S) << PBITS) | q.pid)
        pos = part.pos
        n = part.n
        nxt = part.arrived
        if nxt > pos or (nxt < n and part.arrival[nxt] <= t):
            part.state = WAIT_SLOT
            queue.append(part.pid)
        elif pos < n:
            part.state = IDLE
            part.stream_wait = True
        else:
            part.state = DONE

    def _revoke_at_batch_end(
        self, part: Partition, t: float, busy: int, committed_sum: int
    ) -> tuple[int, int]:
        """The batch of ``part`` ended at ``t`` while it is revoked or its member stops: its entry
        (at the heap's top) is removed and :meth:`_revoked` hands it over. ``busy`` and
        ``committed_sum``: the data plane's running counts; returns them as they are after."""
        heapq.heappop(self.heap)
        self.busy = busy
        self.committed_sum = committed_sum
        self._revoked(part, t)
        return self.busy, self.committed_sum
