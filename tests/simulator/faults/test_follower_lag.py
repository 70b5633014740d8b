"""Followers that fall behind and leave the ISR, then a hard loss of their leader: with
min.insync.replicas 1 the leader acknowledged writes alone and the loss takes its unflushed ones;
with 2 the partition refused those writes and nothing acknowledged is lost (Kafka's
replica.lag.time.max.ms, min.insync.replicas and unclean leader election off)."""

from __future__ import annotations

from typing import Any

import pytest

from simulator import simulate
from simulator.engine import Workload
from simulator.faults.broker import BrokerLosses
from simulator.placement import (
    PartitionFate,
    isr_shrink_s,
    isr_shrunk_partitions,
    lag_gate,
    partition_fate,
)
from simulator.scenario import BrokerLoss, FollowerLag
from tests.simulator.faults.builders import (
    course_scenario,
    design,
    known_bad,
    reference,
    run_arrays,
)

LAG = {"kind": "follower_lag", "at_seconds": 100, "brokers": 1, "duration_seconds": 120}
"""Followers of broker 0's partitions behind 100-220 s; out of the ISR from 130 s."""
LOSS = {"kind": "broker_loss", "at_seconds": 160, "brokers": 1, "duration_seconds": 60}
"""Broker 0 lost hard 160-220 s, 30 s after the ISR shrank to it alone."""


def log(**event_log: Any) -> dict[str, Any]:
    return {"partitions": 3, "partition_key": "event_id", "brokers": 3, **event_log}


def faults() -> tuple[FollowerLag, BrokerLoss]:
    return FollowerLag.model_validate(LAG), BrokerLoss.model_validate(LOSS)


def test_the_isr_shrinks_after_replica_lag_time_max_ms_and_only_for_broker_0s_partitions() -> None:
    lag, _ = faults()
    assert isr_shrink_s(lag) == 130.0
    assert isr_shrink_s(lag.model_copy(update={"duration_seconds": 30})) is None
    d = design(event_log=log(replication_factor=3, min_insync_replicas=2, acks="all"))
    assert isr_shrunk_partitions(d, lag) == 1  # partition 0 of 0..2: the one broker 0 leads
    ref = reference()  # 96 partitions on 3 brokers: every third is led by broker 0
    assert isr_shrunk_partitions(ref, lag) == 32
    rf1 = design(event_log=log(replication_factor=1, acks="all"))
    assert isr_shrunk_partitions(rf1, lag) == 0  # no follower to fall behind


@pytest.mark.parametrize(
    ("event_log", "gate", "fate"),
    [
        # min.insync.replicas 1: writes wait 30 s for the ISR to shrink, then broker 0 answers
        # alone; its loss takes the unflushed 30 s and the partition is offline (no clean leader).
        (
            {"replication_factor": 3, "min_insync_replicas": 1, "acks": "all"},
            (130.0, False),
            PartitionFate(30.0, True, False),
        ),
        (
            {"replication_factor": 2, "min_insync_replicas": 1, "acks": "all"},
            (130.0, False),
            PartitionFate(30.0, True, False),
        ),
        # min.insync.replicas 2: refused from the shrink until the leader is back (220 s); the
        # followers have every acknowledged write, so the loss takes nothing.
        (
            {"replication_factor": 3, "min_insync_replicas": 2, "acks": "all"},
            (220.0, True),
            PartitionFate(0.0, True, False),
        ),
        # acks=1 does not wait for the followers; the loss takes the leader's unflushed writes.
        (
            {"replication_factor": 3, "min_insync_replicas": 2, "acks": "1"},
            (100.0, False),
            PartitionFate(30.0, True, False),
        ),
    ],
)
def test_lag_gate_and_fate_of_broker_0s_partition(
    event_log: dict[str, Any], gate: tuple[float, bool], fate: PartitionFate
) -> None:
    lag, loss = faults()
    d = design(event_log=log(**event_log))
    assert lag_gate(d, 0, lag, [loss]) == gate
    assert partition_fate(d, 0, loss, [lag]) == fate
    # Without the lag the same loss is the plain one: a clean leader from the ISR.
    assert partition_fate(d, 0, loss).lost_window_s <= 0.5


def test_partitions_other_leaders_lead_lose_a_follower_only() -> None:
    lag, loss = faults()
    d = design(event_log=log(replication_factor=3, min_insync_replicas=1, acks="all"))
    assert [lag_gate(d, p, lag, [loss]) for p in (1, 2)] == [(100.0, False)] * 2
    assert [partition_fate(d, p, loss, [lag]) for p in (1, 2)] == [
        PartitionFate(0, False, False)
    ] * 2


EVEN = Workload.from_arrays(300.0, agent=([k / 10 for k in range(3000)], [0.05] * 3000))
"""10 events/s over 3 partitions (event k on partition k mod 3), read at once."""


def lag_then_loss(**event_log: Any):
    d = design(event_log=log(**event_log), consumers={"agent": {"instances": 1}})
    return run_arrays(d, EVEN, [LAG, LOSS])


def test_min_insync_one_loses_what_the_leader_acknowledged_alone() -> None:
    """Partition 0 gets every third event. Its writes of 100-130 s wait for the ISR to shrink
    and enter the log at 130 s; broker 0 then acknowledges alone; the loss at 160 s takes the 100
    written after 130 s (its unflushed 30 s), and writes wait again while it is down (to 220 s):
    30 s + 60 s of blocked producers."""
    sim, result = lag_then_loss(replication_factor=3, min_insync_replicas=1, acks="all")
    m = result.metrics
    assert m.lost == m.log_lost == 100
    assert m.isr_shrunk_partitions == 1
    assert m.producer_blocked_seconds == 90.0
    [lag] = sim.layer(BrokerLosses).lags
    assert (lag.held_partitions, lag.refused_partitions, lag.delayed) == (1, 0, 100)


def test_min_insync_two_refuses_instead_and_loses_nothing() -> None:
    """The same faults: partition 0 refuses writes from 100 s (waiting, then NotEnoughReplicas)
    until broker 0 is back at 220 s; every event of those 120 s waits in the producer."""
    sim, result = lag_then_loss(replication_factor=3, min_insync_replicas=2, acks="all")
    m = result.metrics
    assert (m.lost, m.log_lost) == (0, 0)
    assert m.isr_shrunk_partitions == 1
    assert m.producer_blocked_seconds == 120.0
    [lag] = sim.layer(BrokerLosses).lags
    assert (lag.held_partitions, lag.refused_partitions, lag.delayed) == (1, 1, 400)
    assert m.processed == 3000


def test_a_lag_shorter_than_replica_lag_time_max_ms_only_delays() -> None:
    short = {**LAG, "duration_seconds": 20}
    d = design(event_log=log(replication_factor=3, min_insync_replicas=1, acks="all"))
    result = run_arrays(d, EVEN, [short, LOSS])[1]
    m = result.metrics
    assert (m.lost, m.isr_shrunk_partitions) == (0, 0)
    assert m.producer_blocked_seconds == 20.0


def test_course_follower_lag() -> None:
    """The course's scenario (seed 7): the reference refuses writes on the 32 partitions broker 0
    leads for 210 s and loses nothing; min.insync.replicas 1 writes 60 s longer and its crash
    takes 270 acknowledged events; acks=1 and replication factor 1 lose too."""
    s = course_scenario("follower-lag")
    ref = simulate(reference(), s).metrics
    assert (ref.lost, ref.log_lost, ref.isr_shrunk_partitions) == (0, 0, 32)
    assert ref.producer_blocked_seconds == 210.0
    mi1 = simulate(known_bad("min-insync-1"), s).metrics
    assert mi1.log_lost >= 200 and mi1.lost == mi1.log_lost  # 270 (246-537 on seeds 1-20)
    assert mi1.isr_shrunk_partitions == 32
    assert mi1.producer_blocked_seconds == 150.0
    rf2 = simulate(reference(event_log={"replication_factor": 2, "min_insync_replicas": 1}), s)
    assert rf2.metrics.log_lost >= 200
    for name in ("acks-1", "replication-factor-1"):
        assert simulate(known_bad(name), s).metrics.log_lost > 0
    assert simulate(known_bad("min-insync-equals-rf"), s).metrics.lost == 0
