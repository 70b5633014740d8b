"""Kafka's assignors: worked-numbers item 1 and the examples in the Kafka client's javadocs."""

from __future__ import annotations

import pytest

from simulator.assignment import (
    assign,
    assign_partitions,
    member_ids,
    partition_counts,
    rebalance,
)
from simulator.design import AssignmentStrategy

TWO_TOPICS = {"t0": 3, "t1": 3}
FOUR_TOPICS = {"t0": 2, "t1": 2, "t2": 2, "t3": 2}
UNEVEN_TOPICS = {"t0": 1, "t1": 2, "t2": 3}
UNEVEN_SUBSCRIPTIONS = {"C0": ["t0"], "C1": ["t0", "t1"], "C2": ["t0", "t1", "t2"]}


def tps(*names: str) -> list[tuple[str, int]]:
    """'t0p2' -> ('t0', 2)."""
    out = []
    for name in names:
        topic, part = name.split("p")
        out.append((topic, int(part)))
    return out


# Worked numbers item 1 -------------------------------------------------------------------------


def test_range_six_partitions_four_consumers_gives_2_2_1_1() -> None:
    members = member_ids(4)
    result = assign_partitions(AssignmentStrategy.range, members, 6)
    assert partition_counts(result, members) == [2, 2, 1, 1]
    assert result[members[0]] == [0, 1]
    assert result[members[1]] == [2, 3]
    assert result[members[2]] == [4]
    assert result[members[3]] == [5]


def test_range_six_partitions_eight_consumers_leaves_six_and_seven_idle() -> None:
    members = member_ids(8)
    result = assign_partitions("range", members, 6)
    assert partition_counts(result, members) == [1, 1, 1, 1, 1, 1, 0, 0]
    assert result[members[6]] == [] and result[members[7]] == []


def test_range_sorts_member_ids_as_strings_like_kafka() -> None:
    # Kafka compares member ids as strings: "w-10" sorts before "w-2".
    members = [f"w-{i}" for i in range(11)]
    result = assign_partitions("range", members, 12)
    assert result["w-0"] == [0, 1]
    assert result["w-1"] == [2]
    assert result["w-10"] == [3]
    assert result["w-9"] == [11]


def test_member_ids_sort_in_numeric_order() -> None:
    ids = member_ids(12)
    assert ids == sorted(ids)
    assert ids[0] == "consumer-00" and ids[11] == "consumer-11"
    with pytest.raises(ValueError):
        member_ids(-1)


# RangeAssignor javadoc ------------------------------------------------------------------------


def test_range_javadoc_two_consumers_two_topics() -> None:
    result = assign("range", ["C0", "C1"], TWO_TOPICS)
    assert result == {
        "C0": tps("t0p0", "t0p1", "t1p0", "t1p1"),
        "C1": tps("t0p2", "t1p2"),
    }


# RoundRobinAssignor javadoc -------------------------------------------------------------------


def test_round_robin_javadoc_two_consumers_two_topics() -> None:
    result = assign("round_robin", ["C1", "C0"], TWO_TOPICS)
    assert result == {
        "C0": tps("t0p0", "t0p2", "t1p1"),
        "C1": tps("t0p1", "t1p0", "t1p2"),
    }


def test_round_robin_javadoc_differing_subscriptions() -> None:
    result = assign(
        "round_robin", ["C0", "C1", "C2"], UNEVEN_TOPICS, subscriptions=UNEVEN_SUBSCRIPTIONS
    )
    assert result == {
        "C0": tps("t0p0"),
        "C1": tps("t1p0"),
        "C2": tps("t1p1", "t2p0", "t2p1", "t2p2"),
    }


def test_round_robin_sticky_javadoc_example_two_after_c0_leaves() -> None:
    subs = {m: UNEVEN_SUBSCRIPTIONS[m] for m in ("C1", "C2")}
    result = assign("round_robin", ["C1", "C2"], UNEVEN_TOPICS, subscriptions=subs)
    assert result == {"C1": tps("t0p0", "t1p1"), "C2": tps("t1p0", "t2p0", "t2p1", "t2p2")}


# StickyAssignor javadoc, example 1 -------------------------------------------------------------


def test_sticky_javadoc_example_one_fresh_equals_round_robin() -> None:
    expected = {
        "C0": tps("t0p0", "t1p1", "t3p0"),
        "C1": tps("t0p1", "t2p0", "t3p1"),
        "C2": tps("t1p0", "t2p1"),
    }
    members = ["C0", "C1", "C2"]
    assert assign("cooperative_sticky", members, FOUR_TOPICS) == expected
    assert assign("round_robin", members, FOUR_TOPICS) == expected


def test_sticky_javadoc_example_one_c1_removed_keeps_every_previous_assignment() -> None:
    previous = assign("cooperative_sticky", ["C0", "C1", "C2"], FOUR_TOPICS)
    result = rebalance("cooperative_sticky", ["C0", "C2"], FOUR_TOPICS, previous=previous)
    after = result.assignment
    # The javadoc's point: C0 and C2 keep all they had and share C1's three partitions, 4 each.
    assert after["C0"][:3] == tps("t0p0", "t1p1", "t3p0")
    assert after["C2"][:2] == tps("t1p0", "t2p1")
    assert sorted(len(v) for v in after.values()) == [4, 4]
    assert sorted(after["C0"][3:] + after["C2"][2:]) == tps("t0p1", "t2p0", "t3p1")
    # Kafka's constrained algorithm (identical subscriptions) deals C1's partitions in
    # topic-partition order over the unfilled members sorted by id. The javadoc's listing
    # (C0 gets t2p0, C2 gets t0p1) predates it and came from the general algorithm.
    assert after == {
        "C0": tps("t0p0", "t1p1", "t3p0", "t0p1"),
        "C2": tps("t1p0", "t2p1", "t2p0", "t3p1"),
    }
    # Nothing moves between live members, so the cooperative protocol needs one rebalance.
    assert result.rebalances == 1
    assert result.revoked == {"C0": [], "C2": []}
    assert result.moved == tps("t0p1", "t2p0", "t3p1")
    # Round robin, by contrast, reshuffles: C0 keeps only t0p0 and t3p0.
    rr = assign("round_robin", ["C0", "C2"], FOUR_TOPICS)
    assert rr == {
        "C0": tps("t0p0", "t1p0", "t2p0", "t3p0"),
        "C2": tps("t0p1", "t1p1", "t2p1", "t3p1"),
    }


def test_sticky_with_differing_subscriptions_is_refused() -> None:
    with pytest.raises(ValueError, match="identical subscriptions"):
        assign(
            "cooperative_sticky",
            ["C0", "C1", "C2"],
            UNEVEN_TOPICS,
            subscriptions=UNEVEN_SUBSCRIPTIONS,
        )


# Cooperative protocol --------------------------------------------------------------------------


def test_cooperative_join_revokes_first_then_assigns_in_a_second_rebalance() -> None:
    previous = {"C0": tps("t0p0", "t0p1"), "C1": tps("t0p2", "t0p3"), "C2": tps("t0p4", "t0p5")}
    result = rebalance("cooperative_sticky", ["C0", "C1", "C2", "C3"], {"t0": 6}, previous=previous)
    assert result.assignment == {
        "C0": tps("t0p0", "t0p1"),
        "C1": tps("t0p2", "t0p3"),
        "C2": tps("t0p4"),
        "C3": tps("t0p5"),
    }
    assert result.transferring == {("t0", 5): "C3"}
    assert result.revoked == {"C0": [], "C1": [], "C2": tps("t0p5"), "C3": []}
    assert result.first_round["C3"] == [] and result.first_round["C2"] == tps("t0p4")
    assert result.rebalances == 2
    assert result.moved == tps("t0p5")
    assert result.paused_partitions == 1


def test_eager_join_revokes_everything() -> None:
    members = ["C0", "C1", "C2"]
    previous = assign("range", members, 6)
    result = rebalance("range", [*members, "C3"], 6, previous=previous)
    assert result.rebalances == 1
    assert result.revoked["C0"] == previous["C0"]
    assert result.paused_partitions == 6
    assert partition_counts(result.assignment, ["C0", "C1", "C2", "C3"]) == [2, 2, 1, 1]


@pytest.mark.parametrize("partitions", [1, 5, 6, 7, 12, 48, 50])
@pytest.mark.parametrize("before,after", [(4, 3), (3, 4), (4, 8), (8, 4), (1, 5), (5, 1)])
def test_sticky_balanced_within_one_and_moves_the_minimum(
    partitions: int, before: int, after: int
) -> None:
    old_members = member_ids(before)
    new_members = member_ids(after)
    previous = assign("cooperative_sticky", old_members, partitions)
    result = rebalance("cooperative_sticky", new_members, partitions, previous=previous)
    counts = partition_counts(result.assignment, new_members)
    assert sum(counts) == partitions
    assert max(counts) - min(counts) <= 1
    owned = sorted(tp for tps_ in result.assignment.values() for tp in tps_)
    assert owned == [("events", p) for p in range(partitions)]
    # The most partitions any balanced assignment can leave in place: each member keeps up to
    # the lower quota, and the P mod C members allowed one more go to members that owned more.
    lo, extra = divmod(partitions, after)
    owned_before = [len(previous.get(m, [])) for m in new_members]
    best_kept = sum(min(o, lo) for o in owned_before)
    if extra:
        best_kept += min(extra, sum(1 for o in owned_before if o > lo))
    kept = sum(len(set(previous.get(m, [])) & set(result.assignment[m])) for m in new_members)
    assert kept == best_kept
    assert len(result.moved) == partitions - best_kept


def test_sticky_reproduces_constrained_quota_rules() -> None:
    # 10 partitions, 4 members: quota 2..3 and only 10 mod 4 = 2 members may hold 3.
    previous = {
        "C0": [("t", p) for p in range(3)],
        "C1": [("t", p) for p in range(3, 6)],
        "C2": [("t", p) for p in range(6, 9)],
        "C3": [("t", 9)],
    }
    result = rebalance("cooperative_sticky", ["C0", "C1", "C2", "C3"], {"t": 10}, previous=previous)
    assert result.assignment == {
        "C0": [("t", 0), ("t", 1), ("t", 2)],
        "C1": [("t", 3), ("t", 4), ("t", 5)],
        "C2": [("t", 6), ("t", 7)],
        "C3": [("t", 9), ("t", 8)],
    }
    assert result.transferring == {("t", 8): "C3"}


def test_bad_input_is_rejected() -> None:
    with pytest.raises(ValueError, match="unique"):
        assign("range", ["C0", "C0"], 3)
    with pytest.raises(ValueError, match="negative"):
        assign("range", ["C0"], -1)
    with pytest.raises(ValueError):
        assign("nope", ["C0"], 3)


@pytest.mark.parametrize("strategy", list(AssignmentStrategy))
def test_completed_assignment_is_the_rebalances_assignment_and_rounds(strategy):
    """The simulator's shortcut gives what :func:`rebalance` gives, over members that join and
    leave with random earlier assignments (some partitions claimed twice, some members gone)."""
    import random

    from simulator.assignment import completed_assignment

    rng = random.Random(7)
    for _ in range(200):
        partitions = rng.randint(0, 40)
        pool = [f"consumer-{i}" for i in range(rng.randint(1, 12))]
        members = rng.sample(pool, rng.randint(0, len(pool)))
        previous: dict[str, list[tuple[str, int]]] = {}
        for p in range(partitions):
            for owner in rng.sample(pool, min(len(pool), rng.choice([0, 1, 1, 1, 2]))):
                previous.setdefault(owner, []).append(("events", p))
        full = rebalance(strategy, members, partitions, previous)
        assignment, rounds = completed_assignment(strategy, members, partitions, previous)
        assert (assignment, rounds) == (full.assignment, full.rebalances)
    with pytest.raises(ValueError, match="unique"):
        completed_assignment(strategy, ["a", "a"], 4)


@pytest.mark.parametrize("numpy_from", [0, 10**9], ids=["numpy", "python"])
def test_sticky_owners_is_the_completed_sticky_assignment(monkeypatch, numpy_from):
    """The consumer group's integer cooperative sticky gives the partition owners and rounds that
    :func:`completed_assignment` gives, over members that join and leave (some gone, some
    partitions unowned), with ids that sort as their indexes; both ways of keeping owned
    partitions (member by member, and over arrays for many members)."""
    import random

    from simulator import assignment
    from simulator.assignment import completed_assignment, member_ids, sticky_owners

    monkeypatch.setattr(assignment, "NUMPY_MEMBERS", numpy_from)
    rng = random.Random(11)
    owner: list[int] = []
    for case in range(600):
        if case % 6 == 0:  # a new group with a random earlier assignment
            partitions = rng.randint(0, 60) if rng.random() < 0.6 else rng.randint(61, 300)
            pool = rng.randint(1, 14) if rng.random() < 0.6 else rng.randint(15, 90)
            ids = member_ids(pool)
            owner = [rng.choice([-1, *range(pool)]) for _ in range(partitions)]
        # else: the same group after its last rebalance, members joining and leaving
        members = sorted(rng.sample(range(pool), rng.randint(0, pool)))
        previous: dict[str, list[tuple[str, int]]] = {}
        for p, o in enumerate(owner):
            if o >= 0:
                previous.setdefault(ids[o], []).append(("events", p))
        assignment, rounds = completed_assignment(
            AssignmentStrategy.cooperative_sticky, [ids[m] for m in members], partitions, previous
        )
        expected = [-1] * partitions
        for member, tps in assignment.items():
            for _, p in tps:
                expected[p] = ids.index(member)
        target, got_rounds, dealt = sticky_owners(partitions, members, owner)
        assert (target, got_rounds) == (expected, rounds)
        assert dealt == sorted(dealt)
        assert {p for p in range(partitions) if expected[p] != owner[p]} <= set(dealt)
        if members:
            owner = expected
