"""The estimate of a broker loss: the partitions that refuse writes hold their producers' events
and the runs behind them until the brokers return (simulator.estimate.outages.causal_window), so
the drain after it is the estimate's as well as the simulation's; a design whose partitions all
keep taking writes has nothing to drain in either."""

from __future__ import annotations

from pathlib import Path
from statistics import mean

import pytest

from simulator import simulate
from simulator.design import Design
from simulator.estimate import estimate
from simulator.files import load_design, load_scenario
from simulator.placement import blocked_partitions, waiting_windows
from simulator.scenario import BrokerLoss, Scenario

STEPS = Path(__file__).resolve().parents[3] / "steps"


def _scenario(duration_s: float) -> Scenario:
    """The course's broker-loss scenario, run for ``duration_s`` seconds (the course's 480 s end
    before a blocked design's queues are empty)."""
    base = load_scenario(STEPS / "scenarios" / "broker-loss.yaml")
    return base.model_copy(update={"duration_seconds": duration_s})


def _design(name: str) -> Design:
    path = STEPS / "designs" / ("reference.yaml" if name == "reference" else f"bad/{name}.yaml")
    return load_design(path)


@pytest.mark.parametrize(
    ("name", "blocked", "why"),
    [
        ("reference", 0, "no producer blocks"),
        ("min-insync-equals-rf", 96, "acks=all needs min.insync.replicas 3 in sync"),
        ("replication-factor-1", 32, "only copy was on the lost broker"),
        ("acks-1", 0, "With acks=1, writes a lost leader acknowledged alone are gone"),
    ],
)
def test_the_note_says_which_partitions_refuse_writes(name: str, blocked: int, why: str) -> None:
    design = _design(name)
    scenario = _scenario(480)
    fault = scenario.faults[0]
    assert isinstance(fault, BrokerLoss)
    assert blocked_partitions(design, fault) == blocked
    note = next(n for n in estimate(design, scenario).notes if n.startswith("Broker loss"))
    assert why in note
    if blocked:
        assert f"{blocked} of 96 partitions of each topic refuse writes for 300 s" in note


def test_a_design_that_keeps_taking_writes_has_nothing_to_drain() -> None:
    scenario = _scenario(480)
    e = estimate(_design("reference"), scenario)
    assert e.drain_seconds == 0.0 and e.backlog == 0.0
    assert simulate(_design("reference"), scenario, 1).metrics.drain_seconds == 0.0


@pytest.mark.parametrize(
    ("name", "backlog"),
    [
        # Every partition blocked: every run waits 300 s, 10 agent events/s of work behind them.
        ("min-insync-equals-rf", 3000.0),
        # A third blocked: the runs whose first key falls there wait, then more as they reach one.
        ("replication-factor-1", 1769.0),
    ],
)
def test_blocked_producers_drain_as_the_simulation_does(name: str, backlog: float) -> None:
    """Estimated 261 s and 159 s against 278-326 s and 177-199 s simulated (seeds 1-2 on a
    1,000 s window): within 25 %, the estimate a little short (the held events all reach the log
    at once, and the busiest partitions drain last)."""
    design = _design(name)
    scenario = _scenario(1000)
    e = estimate(design, scenario)
    assert e.drain_group == "agent"
    assert e.backlog == pytest.approx(backlog, rel=0.01)
    drains = [simulate(design, scenario, seed).metrics.drain_seconds for seed in (1, 2)]
    assert None not in drains, drains
    assert e.drain_seconds is not None
    assert e.drain_seconds == pytest.approx(mean(d for d in drains if d is not None), rel=0.25)


def _follower_lag() -> Scenario:
    return load_scenario(STEPS / "scenarios" / "follower-lag.yaml")


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("reference", "below min.insync.replicas 2 they refuse writes until 330 s"),
        ("min-insync-1", "their leader goes on acknowledging writes alone"),
    ],
)
def test_the_follower_lag_note_says_whether_the_leader_acknowledges_alone(
    name: str, says: str
) -> None:
    notes = estimate(_design(name), _follower_lag()).notes
    note = next(n for n in notes if n.startswith("Followers behind"))
    assert (
        "the ISR of 32 of 96 partitions of each topic shrinks to the leader alone at 150 s" in note
    )
    assert says in note


@pytest.mark.parametrize(
    ("name", "pieces"),
    [
        # Refused from the lag's start until broker 0 is back: one piece, a third of the topic.
        ("reference", [(120.0, 330.0, 32)]),
        # Waiting 30 s for the ISR to shrink, then offline while broker 0 is down.
        ("min-insync-1", [(120.0, 150.0, 32), (210.0, 330.0, 32)]),
        # The third of the lag, then every partition (two replicas left against 3).
        ("min-insync-equals-rf", [(120.0, 210.0, 32), (210.0, 330.0, 96)]),
    ],
)
def test_a_follower_lag_and_a_loss_hold_producers_once(
    name: str, pieces: list[tuple[float, float, int]]
) -> None:
    assert waiting_windows(_design(name), _follower_lag().faults) == pieces


def test_the_follower_lag_drain_agrees_with_the_simulation() -> None:
    """The reference: 113.8 s estimated against 109.0, 114.5 and 104.1 s simulated (seeds 1-3);
    min.insync.replicas 3: 155.6 s against 154.3-158.2 s, where the held work of the lag stays
    held while every partition refuses writes."""
    scenario = _follower_lag()
    for name, seeds in (("reference", (1, 2, 3)), ("min-insync-equals-rf", (1, 2))):
        design = _design(name)
        expected = estimate(design, scenario).drain_seconds
        drains = [simulate(design, scenario, seed).metrics.drain_seconds for seed in seeds]
        assert expected is not None and None not in drains, drains
        simulated = mean(d for d in drains if d is not None)
        assert expected == pytest.approx(simulated, rel=0.15), (name, expected, drains)
