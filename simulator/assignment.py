"""Kafka's partition assignors, computed as the Kafka consumer client computes them.

Three strategies of :class:`simulator.design.AssignmentStrategy`, each reproducing the Java class
of the Apache Kafka client (``org.apache.kafka.clients.consumer``):

- ``range`` (``RangeAssignor``): per topic, partitions in numeric order and the subscribed members
  in lexicographic order of member id; each gets ``n div c`` partitions and the first ``n mod c``
  get one extra, as one contiguous range.
- ``round_robin`` (``RoundRobinAssignor``): every topic-partition sorted by topic then partition,
  members sorted by id, dealt out in turn; a member not subscribed to a partition's topic is
  skipped.
- ``cooperative_sticky`` (``CooperativeStickyAssignor`` on ``AbstractStickyAssignor``'s
  constrained algorithm for members with identical subscriptions): balanced to within one
  partition, previously owned partitions kept as far as balance allows, and, under the cooperative
  protocol, a partition that moves from one live member to another is first revoked (rebalance 1)
  and only then assigned to its new owner (rebalance 2).

Member ids are compared as strings, as Kafka does: ``"consumer-10"`` sorts before
``"consumer-2"``. :func:`member_ids` makes zero-padded ids whose string order is their numeric
order.

A topic-partition is a ``(topic, partition)`` tuple; an assignment maps each member id to its
topic-partitions in the order the assignor produced them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

from simulator.design import AssignmentStrategy

TopicPartition = tuple[str, int]
Assignment = dict[str, list[TopicPartition]]

DEFAULT_TOPIC = "events"
"""Topic name used when partitions are given as a bare count."""

REBALANCE_SYNC_S = 1.0
"""Seconds from the end of revocation to the new assignment processing (JoinGroup + SyncGroup),
in the simulation's rebalances and the estimate's restarts."""


def member_ids(count: int, prefix: str = "consumer") -> list[str]:
    """Return ``count`` member ids whose string order equals their numeric order.

    ``member_ids(12)`` gives ``["consumer-00", ..., "consumer-11"]``. Raises ``ValueError`` for a
    negative count.
    """
    if count < 0:
        raise ValueError(f"member count must be >= 0, got {count}")
    width = max(1, len(str(count - 1)))
    return [f"{prefix}-{i:0{width}d}" for i in range(count)]


def _topics(partitions: int | Mapping[str, int]) -> dict[str, int]:
    topics = {DEFAULT_TOPIC: partitions} if isinstance(partitions, int) else dict(partitions)
    for topic, count in topics.items():
        if count < 0:
            raise ValueError(f"topic {topic!r} has a negative partition count {count}")
    return topics


def _check_unique(members: Sequence[str]) -> None:
    if len(set(members)) != len(members):
        raise ValueError("member ids must be unique")


def _subscriptions(
    members: Sequence[str],
    topics: Mapping[str, int],
    subscriptions: Mapping[str, Sequence[str]] | None,
) -> dict[str, set[str]]:
    _check_unique(members)
    if subscriptions is None:
        return {m: set(topics) for m in members}
    missing = [m for m in members if m not in subscriptions]
    if missing:
        raise ValueError(f"no subscription given for members {missing}")
    return {m: set(subscriptions[m]) for m in members}


def _range(topics: Mapping[str, int], subs: Mapping[str, set[str]]) -> Assignment:
    """RangeAssignor.assign: per topic, contiguous ranges over members sorted by id."""
    assignment: Assignment = {m: [] for m in subs}
    for topic in sorted(topics):
        consumers = sorted(m for m, t in subs.items() if topic in t)
        if not consumers:
            continue
        n = topics[topic]
        per_consumer, with_extra = divmod(n, len(consumers))
        for i, member in enumerate(consumers):
            start = per_consumer * i + min(i, with_extra)
            length = per_consumer + (1 if i < with_extra else 0)
            assignment[member].extend((topic, p) for p in range(start, start + length))
    return assignment


def _round_robin(topics: Mapping[str, int], subs: Mapping[str, set[str]]) -> Assignment:
    """RoundRobinAssignor.assign: sorted topic-partitions dealt over sorted members, skipping
    members not subscribed to the partition's topic."""
    assignment: Assignment = {m: [] for m in subs}
    ring = sorted(subs)
    if not ring:
        return assignment
    subscribed_topics = sorted({t for ts in subs.values() for t in ts if t in topics})
    pos = 0
    for topic in subscribed_topics:
        for p in range(topics[topic]):
            while topic not in subs[ring[pos]]:
                pos = (pos + 1) % len(ring)
            assignment[ring[pos]].append((topic, p))
            pos = (pos + 1) % len(ring)
    return assignment


@dataclass
class _StickyOutcome:
    assignment: Assignment
    transferring: dict[TopicPartition, str]


def _constrained_sticky(
    topics: Mapping[str, int],
    members: Sequence[str],
    owned: Mapping[str, Sequence[TopicPartition]],
) -> _StickyOutcome:
    """AbstractStickyAssignor.constrainedAssign for members with identical subscriptions.

    1. Keep previously owned partitions: a member owning fewer than minQuota keeps them all and is
       unfilled; one owning maxQuota or more keeps its first maxQuota while fewer than
       ``total mod members`` members hold maxQuota; any other keeps its first minQuota. The rest are
       revoked (:func:`_keep_owned`).
    2. Deal the unassigned partitions, sorted by topic then partition, round robin over the
       unfilled members sorted by id, up to minQuota, then one more each to members at minQuota
       (sorted by id) until ``total mod members`` members hold maxQuota (:func:`_deal`).

    Kafka walks the owners in HashMap order; here members are walked in id order, so the result
    does not depend on hashing.
    """
    all_partitions = [(t, p) for t in sorted(topics) for p in range(topics[t])]
    consumers = sorted(members)
    min_quota, expected_over_min = divmod(len(all_partitions), len(consumers))
    # A partition claimed by several members is taken from all of them (Kafka logs an error).
    claims: dict[TopicPartition, int] = {}
    for m in consumers:
        for tp in owned.get(m, ()):
            claims[tp] = claims.get(tp, 0) + 1
    multiply_claimed = {tp for tp, c in claims.items() if c > 1}
    kept = _keep_owned(
        consumers, owned, set(all_partitions), multiply_claimed, min_quota, expected_over_min
    )
    unassigned = [tp for tp in all_partitions if tp not in kept.assigned]
    transferring = _deal(unassigned, kept, min_quota, kept.revoked | multiply_claimed)
    return _StickyOutcome(kept.assignment, transferring)


@dataclass
class _Kept:
    """Step 1 of the constrained sticky assignment: what each member keeps, what it gives up, and
    the members still below minQuota (``under_min``) or at it with room for one more
    (``exactly_min``), each sorted by id."""

    assignment: Assignment
    assigned: set[TopicPartition]
    revoked: set[TopicPartition]
    under_min: list[str]
    exactly_min: list[str]


def _keep_owned(
    consumers: list[str],
    owned: Mapping[str, Sequence[TopicPartition]],
    existing: set[TopicPartition],
    multiply_claimed: set[TopicPartition],
    min_quota: int,
    expected_over_min: int,
) -> _Kept:
    """Step 1 of :func:`_constrained_sticky`: each member keeps up to its quota of what it owned."""
    max_quota = min_quota + (1 if expected_over_min else 0)
    kept = _Kept({m: [] for m in consumers}, set(), set(), [], [])
    assignment, assigned, revoked = kept.assignment, kept.assigned, kept.revoked
    over_min = 0
    for m in consumers:
        if multiply_claimed:
            mine = [tp for tp in owned.get(m, ()) if tp in existing and tp not in multiply_claimed]
        else:
            mine = [tp for tp in owned.get(m, ()) if tp in existing]
        if len(mine) < min_quota:
            kept.under_min.append(m)
            keep = len(mine)
        elif len(mine) >= max_quota and over_min < expected_over_min:
            over_min += 1
            if over_min == expected_over_min:
                kept.exactly_min.clear()
            keep = max_quota
        else:
            keep = min_quota
            if over_min < expected_over_min:
                kept.exactly_min.append(m)
        head = mine if keep >= len(mine) else mine[:keep]
        assignment[m] = head
        assigned.update(head)
        if keep < len(mine):
            revoked.update(mine[keep:])
    kept.under_min.sort()
    kept.exactly_min.sort()
    return kept


def _deal(
    unassigned: list[TopicPartition],
    kept: _Kept,
    min_quota: int,
    taken_away: set[TopicPartition],
) -> dict[TopicPartition, str]:
    """Step 2 of :func:`_constrained_sticky`: deal ``unassigned`` round robin (in place on
    ``kept.assignment``); returns the partitions taken from another member (``taken_away``) with
    their new owner. Raises RuntimeError when no member has room (a bug: quotas cover every
    partition)."""
    under_min, exactly_min = kept.under_min, kept.exactly_min
    transferring: dict[TopicPartition, str] = {}
    idx = 0
    for tp in unassigned:
        if idx < len(under_min):
            member = under_min[idx]
            idx += 1
        elif not under_min and not exactly_min:
            raise RuntimeError("sticky assignment ran out of members with spare capacity")
        elif not under_min:
            member = exactly_min.pop(0)
        else:
            idx = 0
            member = under_min[idx]
            idx += 1
        kept.assignment[member].append(tp)
        if tp in taken_away:
            transferring[tp] = member
        if len(kept.assignment[member]) == min_quota:
            # Java removes the member through the iterator that just returned it.
            if member in under_min:
                pos = under_min.index(member)
                under_min.pop(pos)
                if pos < idx:
                    idx -= 1
            exactly_min.append(member)
    return transferring


def _identical_subscriptions(subs: Mapping[str, set[str]]) -> bool:
    values = list(subs.values())
    return all(v == values[0] for v in values[1:])


@dataclass(frozen=True)
class Rebalance:
    """The outcome of one group rebalance.

    - ``assignment``: each member's partitions once the rebalance has completed.
    - ``first_round``: what each member holds after the first rebalance. Eager protocol (range,
      round robin): equal to ``assignment``. Cooperative protocol: ``assignment`` minus the
      partitions that move between live members, which are held by nobody until the second
      rebalance.
    - ``revoked``: partitions each member gives up at the start. Eager: everything it owned (an
      eager rebalance stops all processing). Cooperative: only partitions it loses.
    - ``moved``: partitions whose owner differs before and after (departed owners included), in
      topic-partition order.
    - ``rebalances``: 1, or 2 when the cooperative protocol needs a follow-up rebalance.
    """

    strategy: AssignmentStrategy
    assignment: Assignment
    first_round: Assignment
    revoked: dict[str, list[TopicPartition]]
    moved: list[TopicPartition]
    rebalances: int
    transferring: dict[TopicPartition, str] = field(default_factory=dict)

    @property
    def paused_partitions(self) -> int:
        """Partitions that stop being processed while the group rebalances.

        Eager: every previously owned partition; cooperative: the revoked ones plus those of
        members that left.
        """
        revoked = {tp for tps in self.revoked.values() for tp in tps}
        return len(revoked | set(self.moved))


def rebalance(
    strategy: AssignmentStrategy | str,
    members: Sequence[str],
    partitions: int | Mapping[str, int],
    previous: Mapping[str, Sequence[TopicPartition]] | None = None,
    subscriptions: Mapping[str, Sequence[str]] | None = None,
) -> Rebalance:
    """Compute a rebalance of a consumer group as Kafka's assignor does.

    Args:
        strategy: an :class:`AssignmentStrategy` (or its value, e.g. ``"range"``).
        members: member ids of the group after the change (string order matters, see module doc).
        partitions: a partition count for one topic named :data:`DEFAULT_TOPIC`, or
            ``{topic: partition count}``.
        previous: ``{member id: topic-partitions it owned}`` before the rebalance (members may
            include ones that have left); ``None`` for a fresh group. Only the sticky assignor
            uses it for placement; it always feeds ``revoked`` and ``moved``.
        subscriptions: ``{member id: topics}``; ``None`` means every member subscribes to every
            topic.

    Returns:
        A :class:`Rebalance`.

    Raises:
        ValueError: duplicate member ids, a negative partition count, a member without a
            subscription, or cooperative-sticky with differing subscriptions (Kafka's general
            sticky algorithm is not reproduced; every designlab group subscribes to one topic).
    """
    strategy = AssignmentStrategy(strategy)
    topics = _topics(partitions)
    subs = _subscriptions(members, topics, subscriptions)
    prev: dict[str, list[TopicPartition]] = {m: list(tps) for m, tps in (previous or {}).items()}
    final, transferring = _assignment(strategy, members, topics, subs, prev)
    owner_before_all = {tp: m for m, tps in prev.items() for tp in tps}
    owner_after = {tp: m for m, tps in final.items() for tp in tps}
    moved = sorted(
        tp
        for tp in set(owner_before_all) | set(owner_after)
        if owner_before_all.get(tp) != owner_after.get(tp)
    )
    if strategy is AssignmentStrategy.cooperative_sticky:
        first_round = {m: [tp for tp in tps if tp not in transferring] for m, tps in final.items()}
        revoked = {m: [tp for tp in prev.get(m, []) if owner_after.get(tp) != m] for m in members}
        rounds = 2 if transferring else 1
    else:
        first_round = {m: list(tps) for m, tps in final.items()}
        revoked = {m: list(prev.get(m, [])) for m in members}
        rounds = 1
    return Rebalance(
        strategy=strategy,
        assignment=final,
        first_round=first_round,
        revoked=revoked,
        moved=moved,
        rebalances=rounds,
        transferring=transferring,
    )


def completed_assignment(
    strategy: AssignmentStrategy | str,
    members: Sequence[str],
    partitions: int | Mapping[str, int],
    previous: Mapping[str, Sequence[TopicPartition]] | None = None,
) -> tuple[Assignment, int]:
    """What :func:`rebalance` returns as ``assignment`` and ``rebalances``, for members that all
    subscribe to every topic: ``({member id: [(topic, partition), ...]}, rounds)``, rounds 1, or
    2 for cooperative sticky when a partition moves between live members. The moved and revoked
    lists are not built: a simulated consumer group in a rebalance storm rebalances thousands of
    times and reads only these two. Raises ``ValueError`` as :func:`rebalance` does."""
    strategy = AssignmentStrategy(strategy)
    topics = _topics(partitions)
    if strategy is not AssignmentStrategy.cooperative_sticky:
        subs = _subscriptions(members, topics, None)
        return _assignment(strategy, members, topics, subs, {})[0], 1
    # Every member subscribes to every topic: no subscription sets to build and compare.
    _check_unique(members)
    final, transferring = _sticky(topics, members, previous or {})
    return final, 2 if transferring else 1


def _assignment(
    strategy: AssignmentStrategy,
    members: Sequence[str],
    topics: Mapping[str, int],
    subs: Mapping[str, set[str]],
    prev: Mapping[str, list[TopicPartition]],
) -> tuple[Assignment, dict[TopicPartition, str]]:
    """The assignor's result once the rebalance has completed, and (cooperative sticky) the
    partitions that move between live members with their new owner; errors as :func:`rebalance`."""
    if strategy is AssignmentStrategy.range:
        return _range(topics, subs), {}
    if strategy is AssignmentStrategy.round_robin:
        return _round_robin(topics, subs), {}
    if not _identical_subscriptions(subs):
        raise ValueError(
            "cooperative_sticky is computed for members with identical subscriptions only"
        )
    if not members:
        return {}, {}
    return _sticky({t: topics[t] for t in subs[members[0]] if t in topics}, members, prev)


def _sticky(
    subscribed: Mapping[str, int],
    members: Sequence[str],
    prev: Mapping[str, Sequence[TopicPartition]],
) -> tuple[Assignment, dict[TopicPartition, str]]:
    """Cooperative sticky over ``subscribed`` for ``members`` that all subscribe to it: the
    completed assignment and the partitions moving between live members (none for no member)."""
    if not members:
        return {}, {}
    owned = {m: [tp for tp in prev.get(m, ()) if tp[0] in subscribed] for m in members}
    outcome = _constrained_sticky(subscribed, members, owned)
    return outcome.assignment, outcome.transferring


def assign(
    strategy: AssignmentStrategy | str,
    members: Sequence[str],
    partitions: int | Mapping[str, int],
    previous: Mapping[str, Sequence[TopicPartition]] | None = None,
    subscriptions: Mapping[str, Sequence[str]] | None = None,
) -> Assignment:
    """Return ``{member id: [(topic, partition), ...]}`` once the rebalance has completed.

    Same arguments and errors as :func:`rebalance`; a member that gets nothing maps to ``[]``.
    """
    return rebalance(strategy, members, partitions, previous, subscriptions).assignment


def assign_partitions(
    strategy: AssignmentStrategy | str,
    members: Sequence[str],
    partitions: int,
    previous: Mapping[str, Sequence[int]] | None = None,
) -> dict[str, list[int]]:
    """Single-topic helper: ``{member id: [partition, ...]}`` for ``partitions`` partitions.

    ``previous`` maps member ids to partition numbers they owned. Raises ``ValueError`` as
    :func:`rebalance` does.
    """
    prev = (
        {m: [(DEFAULT_TOPIC, p) for p in ps] for m, ps in previous.items()}
        if previous is not None
        else None
    )
    result = assign(strategy, members, partitions, prev)
    return {m: [p for _, p in tps] for m, tps in result.items()}


def partition_counts(
    assignment: Mapping[str, Sequence[object]], members: Sequence[str]
) -> list[int]:
    """Partitions owned per member, in the order of ``members`` (``[2, 2, 1, 1]`` style)."""
    return [len(assignment.get(m, ())) for m in members]


NUMPY_MEMBERS = 48
"""From this many live members, :func:`sticky_owners` keeps owned partitions with numpy."""

_Kept_ = tuple[list[int], list[int], dict[int, int], list[int], bool]
"""Step 1 of :func:`sticky_owners`: the members under minQuota and at it with room for one more
(each in id order), the partitions each of those keeps (by member), the partitions to deal again
(any order) and whether a live member gives one up."""


def _keep_python(
    owner: list[int], members: Sequence[int], min_quota: int, expected_over_min: int
) -> _Kept_:
    """:func:`_keep_owned` in integers, member by member (few members)."""
    counts = Counter(owner)
    max_quota = min_quota + (1 if expected_over_min else 0)
    under_min: list[int] = []
    exactly_min: list[int] = []
    count: dict[int, int] = {}
    unassigned: list[int] = []
    revoked = False
    over_min = 0
    for m in members:
        n = counts.get(m, 0)
        if n < min_quota:
            under_min.append(m)
            keep = n
        elif n >= max_quota and over_min < expected_over_min:
            over_min += 1
            if over_min == expected_over_min:
                exactly_min.clear()
            keep = max_quota
        else:
            keep = min_quota
            if over_min < expected_over_min:
                exactly_min.append(m)
        count[m] = keep
        if keep < n:
            revoked = True
            unassigned.extend(_positions(owner, m, n)[keep:])
    live = set(members)
    for o, n in counts.items():
        if o not in live:
            unassigned.extend(_positions(owner, o, n))
    return under_min, exactly_min, count, unassigned, revoked


def _keep_numpy(
    owner: list[int], members: Sequence[int], min_quota: int, expected_over_min: int
) -> _Kept_:
    """:func:`_keep_python` over arrays (many members): the i-th member is over minQuota when it
    owns maxQuota or more and fewer than ``expected_over_min`` such members come before it; the
    members at minQuota are kept for dealing only while that count is not reached (Java clears
    the list when it is)."""
    # numpy loads here, not with the module: commands that only read designs (lint, import)
    # never load it.
    import numpy as np

    own = np.array(owner, dtype=np.int64)
    mem = np.array(members, dtype=np.int64)
    valid = own >= 0
    top = int(max(int(mem[-1]), int(own.max(initial=-1)))) + 1
    ns = np.bincount(own[valid], minlength=top)[mem]
    under = ns < min_quota
    keep = np.where(under, ns, min_quota)
    exact = np.zeros(len(mem), dtype=bool)
    if expected_over_min:
        candidate = ~under & (ns >= min_quota + 1)
        over = candidate & (np.cumsum(candidate) <= expected_over_min)
        keep[over] = min_quota + 1
        if int(over.sum()) < expected_over_min:
            exact = ~under & ~over
    revoking = np.flatnonzero(keep < ns)
    parts: list[np.ndarray] = [np.flatnonzero(~valid)]
    for i in revoking.tolist():
        parts.append(np.flatnonzero(own == mem[i])[int(keep[i]) :])
    live = np.zeros(top, dtype=bool)
    live[mem] = True
    gone = valid.copy()
    gone[valid] = ~live[own[valid]]
    parts.append(np.flatnonzero(gone))
    under_min = mem[under].tolist()
    count = dict(zip(under_min, ns[under].tolist(), strict=True))
    exactly_min = mem[exact].tolist()
    count.update(dict.fromkeys(exactly_min, min_quota))
    unassigned = np.concatenate(parts).tolist()
    return under_min, exactly_min, count, unassigned, bool(len(revoking))


def sticky_owners(
    partitions: int, members: Sequence[int], owner: Sequence[int]
) -> tuple[list[int], int, list[int]]:
    """Cooperative sticky for one topic in integers: what :func:`completed_assignment` gives for
    members whose ids sort as their indexes (:func:`member_ids`), as the simulated consumer group
    asks for it on every rebalance of a storm (no ids, topic tuples or dicts to build). The work
    in Python is per member and per partition dealt again; the passes over every partition run
    in C (``Counter``, ``list.index``).

    Args:
        partitions: the topic's partition count (``len(owner)``).
        members: the live members' indexes, ascending (their ids' order).
        owner: per partition, the index of its member before the rebalance, or -1 (a member not
            in ``members`` has left: its partitions are dealt again).

    Returns:
        ``(target, rounds, dealt)``: per partition its member's index once the rebalance has
        completed (-1 for every partition when there is no member); 1, or 2 when a partition
        moves between live members (a follow-up rebalance); and the partitions dealt again, in
        order (only these can change owner; every partition when there is no member). The same
        steps as
        :func:`_constrained_sticky` (:func:`_keep_owned`, then :func:`_deal`), so the same result.
    """
    if not members:
        return [-1] * partitions, 1, list(range(partitions))
    owner = list(owner)
    min_quota, expected_over_min = divmod(partitions, len(members))
    keep = _keep_numpy if len(members) >= NUMPY_MEMBERS else _keep_python
    under_min, exactly_min, count, unassigned, revoked = keep(
        owner, members, min_quota, expected_over_min
    )
    target = owner
    if not unassigned:
        return target, 1, unassigned
    unassigned.sort()
    for p in unassigned:
        target[p] = -1
    # _deal: the unassigned partitions in order, round robin over the members under minQuota,
    # then one more each to members at it.
    idx = 0
    for p in unassigned:
        if idx < len(under_min):
            member = under_min[idx]
            idx += 1
        elif not under_min and not exactly_min:
            raise RuntimeError("sticky assignment ran out of members with spare capacity")
        elif not under_min:
            member = exactly_min.pop(0)
        else:
            idx = 0
            member = under_min[idx]
            idx += 1
        target[p] = member
        c = count[member] + 1
        count[member] = c
        if c == min_quota:
            if member in under_min:
                pos = under_min.index(member)
                under_min.pop(pos)
                if pos < idx:
                    idx -= 1
            exactly_min.append(member)
    return target, 2 if revoked else 1, unassigned


def _positions(values: list[int], value: int, n: int) -> list[int]:
    """The first ``n`` indexes of ``value`` in ``values``, ascending (``list.index`` scans)."""
    found = []
    at = -1
    for _ in range(n):
        at = values.index(value, at + 1)
        found.append(at)
    return found
