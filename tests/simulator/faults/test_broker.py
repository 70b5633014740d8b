"""Broker loss (issue item 7): acks, min.insync.replicas and the replication factor decide whether
acknowledged events vanish or producers block while a broker is gone."""

from __future__ import annotations

import math
from typing import Any

import pytest

from simulator import simulate
from simulator.engine import Workload
from simulator.faults.broker import BrokerLosses
from simulator.placement import PartitionFate, partition_fate
from simulator.scenario import BrokerLoss
from tests.simulator.faults.builders import (
    course_scenario,
    design,
    known_bad,
    reference,
    run_arrays,
)

LOSS = {"kind": "broker_loss", "at_seconds": 100, "brokers": 1, "duration_seconds": 60}


def log(**event_log: Any) -> dict[str, Any]:
    return {"partitions": 3, "partition_key": "event_id", "brokers": 3, **event_log}


@pytest.mark.parametrize(
    ("event_log", "lost", "fates"),
    [
        # RF 1: partition 0 lives only on broker 0: its page cache (30 s) is gone, writes block.
        ({"replication_factor": 1, "acks": "all"}, 1, [PartitionFate(30.0, True, False)]),
        # acks=1: a lost leader's last 500 ms, acknowledged alone, are truncated away.
        (
            {"replication_factor": 3, "min_insync_replicas": 2, "acks": "1"},
            1,
            [PartitionFate(0.5, False, False)],
        ),
        # acks=all with 2 of 3 replicas left and min.insync.replicas 2: nothing happens.
        (
            {"replication_factor": 3, "min_insync_replicas": 2, "acks": "all"},
            1,
            [PartitionFate(0.0, False, False)],
        ),
        # Two brokers gone: one replica left, under min.insync.replicas: writes are refused.
        (
            {"replication_factor": 3, "min_insync_replicas": 2, "acks": "all"},
            2,
            [PartitionFate(0.0, True, False)],
        ),
        # acks=0 on an offline partition: the producer keeps sending into the void.
        ({"replication_factor": 1, "acks": "0"}, 1, [PartitionFate(30.0, False, True)]),
    ],
)
def test_partition_fate(event_log: dict[str, Any], lost: int, fates: list[PartitionFate]) -> None:
    d = design(event_log=log(**event_log))
    fault = BrokerLoss.model_validate({**LOSS, "brokers": lost})
    assert partition_fate(d, 0, fault) == fates[0]


def test_partitions_whose_replicas_survive_are_untouched() -> None:
    d = design(event_log=log(replication_factor=1, acks="all"))
    fault = BrokerLoss.model_validate(LOSS)
    assert [partition_fate(d, p, fault).blocked for p in range(3)] == [True, False, False]


EVEN = Workload.from_arrays(300.0, agent=([k / 10 for k in range(3000)], [0.05] * 3000))
"""10 events/s over 3 partitions (event k on partition k mod 3), read at once."""


def loss(**event_log: Any):
    d = design(event_log=log(**event_log), consumers={"agent": {"instances": 1}})
    return run_arrays(d, EVEN, [LOSS])


def test_replication_factor_one_loses_the_unflushed_writes_and_blocks_producers() -> None:
    """Partition 0 gets every third event: 100 of them in the 30 s before the loss, 200 during the
    60 s it is gone, which wait in the producers until 160 s."""
    sim, result = loss(replication_factor=1, acks="all")
    m = result.metrics
    assert m.lost == m.log_lost == 100
    assert m.producer_blocked_seconds == 60.0
    [outcome] = sim.layer(BrokerLosses).outcomes
    assert (outcome.lost_after_read, outcome.delayed, outcome.blocked_partitions) == (100, 200, 1)
    part = sim.engine.groups["agent"].parts[0]
    delayed = [i for i, a in enumerate(part.arrival) if a == 160.0]
    assert len(delayed) == 200
    assert min(part.first_start[i] for i in delayed) >= 160.0
    assert m.processed == 3000


def test_acks_one_loses_the_leaders_last_half_second() -> None:
    m = loss(replication_factor=3, min_insync_replicas=2, acks="1")[1].metrics
    assert m.lost == m.log_lost == 2  # events 996 and 999, at 99.6 and 99.9 s
    assert m.producer_blocked_seconds == 0.0


def test_acks_all_with_enough_insync_replicas_loses_nothing() -> None:
    m = loss(replication_factor=3, min_insync_replicas=2, acks="all")[1].metrics
    assert (m.lost, m.log_lost, m.producer_blocked_seconds) == (0, 0, 0.0)


def test_min_insync_replicas_equal_to_the_replication_factor_blocks_every_write_on_one_loss():
    """RF 3 on 3 brokers: every partition has a replica on broker 0, so with it gone two copies
    are left against min.insync.replicas 3 (NotEnoughReplicas): the 599 events produced after
    100 s and before 160 s wait in the producers and enter the log when the broker returns."""
    sim, result = loss(replication_factor=3, min_insync_replicas=3, acks="all")
    m = result.metrics
    assert (m.lost, m.log_lost, m.producer_blocked_seconds) == (0, 0, 60.0)
    [outcome] = sim.layer(BrokerLosses).outcomes
    assert (outcome.blocked_partitions, outcome.delayed) == (3, 599)
    assert m.backlog_peak >= 590  # the waiting events are a backlog that grows for 60 s
    kept = loss(replication_factor=3, min_insync_replicas=2, acks="all")[1].metrics
    assert kept.producer_blocked_seconds == 0.0
    assert kept.backlog_peak < 10


def test_acks_zero_on_an_offline_partition_loses_what_is_sent_meanwhile() -> None:
    sim, result = loss(replication_factor=1, acks="0")
    m = result.metrics
    assert m.lost == m.log_lost == 100 + 200
    assert m.producer_blocked_seconds == 0.0
    part = sim.engine.groups["agent"].parts[0]
    during = [i for i, a in enumerate(part.arrival) if 100 <= a < 160]
    assert all(math.isnan(part.first_finish[i]) for i in during)  # skipped, never processed
    assert m.processed == 3000 - 200


def test_unread_events_of_a_lost_window_are_never_processed() -> None:
    """A slow consumer (0.5 s steps, 3.3 events/s per partition against 2/s): most of partition
    0's last 30 s were still unread when broker 0 went, and are skipped."""
    slow = Workload.from_arrays(300.0, agent=([k / 10 for k in range(3000)], [0.5] * 3000))
    d = design(
        event_log=log(replication_factor=1, acks="all"), consumers={"agent": {"instances": 1}}
    )
    sim, result = run_arrays(d, slow, [LOSS])
    [outcome] = sim.layer(BrokerLosses).outcomes
    assert outcome.lost == 100
    unread = outcome.lost - outcome.lost_after_read
    assert unread > 50
    part = sim.engine.groups["agent"].parts[0]
    window = [i for i, a in enumerate(part.arrival) if 70 <= a < 100]
    assert sum(1 for i in window if math.isnan(part.first_finish[i])) == unread


def test_course_broker_loss() -> None:
    s = course_scenario("broker-loss")
    ref = simulate(reference(), s).metrics
    assert (ref.lost, ref.producer_blocked_seconds) == (0, 0.0)
    rf1 = simulate(known_bad("replication-factor-1"), s).metrics
    assert rf1.lost > 0
    assert rf1.producer_blocked_seconds == 300.0
    acks1 = simulate(known_bad("acks-1"), s).metrics
    assert acks1.lost > 0
    assert acks1.producer_blocked_seconds == 0.0
