"""Rolling deploys (assignment strategy) and member pauses (session timeout)."""

from __future__ import annotations

from simulator.engine import Workload
from simulator.faults.rolling import MemberPauses
from simulator.result import Metrics
from tests.simulator.faults.builders import design, run_arrays

STEADY = Workload.from_arrays(300.0, agent=([i / 8.0 for i in range(8 * 300)], [0.8] * (8 * 300)))
"""8 records/s, evenly spaced, 0.8 s each, over 300 s: about 6.4 of 16 slots busy."""

DEPLOY = {"kind": "rolling_restart", "at_seconds": 60, "down_seconds": 5, "interval_seconds": 30}


def deploy(strategy: str) -> Metrics:
    """4 instances x 4 slots over 16 partitions, max.poll.records 40 (10 a partition: batches of
    about 8 s), restarted one after another from 60 s."""
    d = design(
        event_log={"partitions": 16},
        consumers={
            "agent": {
                "instances": 4,
                "concurrency_per_instance": 4,
                "max_poll_records": 40,
                "assignment": strategy,
            }
        },
    )
    return run_arrays(d, STEADY, [DEPLOY])[1].metrics


def test_a_rolling_deploy_rebalances_twice_per_instance() -> None:
    """Each instance leaves (a rebalance at once, no session timeout) and joins again."""
    m = deploy("range")
    assert m.rebalances == 2 * 4
    assert (m.lost, m.duplicate_effects, m.redelivered) == (0, 0, 0)  # graceful: nothing redone


def test_an_eager_strategy_pauses_every_partition_on_each_rebalance_of_a_deploy() -> None:
    """Range and round robin stop all 16 partitions until every batch is done; cooperative sticky
    stops only the moved ones, so its lag stays lower."""
    eager = [deploy("range"), deploy("round_robin")]
    sticky = deploy("cooperative_sticky")
    for m in eager:
        assert m.lag_total_max > 1.5 * sticky.lag_total_max
        assert m.latency_p99_s > sticky.latency_p99_s
    assert sticky.processed >= eager[0].processed  # no work lost to the deploy either way


def pause(session_timeout_ms: int) -> tuple[Metrics, int]:
    """2 instances over 8 partitions; member 1 pauses 10 s at 100 s."""
    d = design(consumers={"agent": {"session_timeout_ms": session_timeout_ms}})
    fault = {"kind": "member_pause", "at_seconds": 100, "member": 1, "duration_seconds": 10}
    sim, result = run_arrays(d, STEADY, [fault])
    evicted = sim.layers.get(MemberPauses).evictions
    return result.metrics, evicted


def test_a_pause_longer_than_the_session_timeout_evicts_a_healthy_member() -> None:
    """At 6 s (the broker's minimum) the 10 s pause evicts member 1 at 106 s: a rebalance, its
    fetched records redelivered, and a rejoin at 110 s (another rebalance)."""
    m, evicted = pause(6_000)
    assert evicted == 1
    assert m.rebalances == 2
    assert m.redelivered > 0
    assert m.lost == 0


def test_a_pause_within_the_session_timeout_costs_only_the_pause() -> None:
    m, evicted = pause(45_000)
    assert evicted == 0
    assert (m.rebalances, m.redelivered) == (0, 0)
