"""What a simulation stopped at its wall-time limit blames: a design field when the design is
known to make runs slow, else nothing (then it is the machine's matter, app.sim_budget)."""

from __future__ import annotations

from pathlib import Path

from app.sim_budget import slow_causes
from simulator.files import load_design, load_scenario

STEPS = Path(__file__).resolve().parents[2] / "steps"


def test_a_thousand_instances_over_four_thousand_partitions_are_named() -> None:
    """1,024 agent instances x 4,096 partitions: each rebalance reassigns 4,096 partitions among
    1,024 members (a replay behind a 1,500 RPM provider ran over two minutes): named, with the
    field at fault; the reference's 8 x 96 is not."""
    reference = load_design(STEPS / "designs" / "reference.yaml")
    replay = load_scenario(STEPS / "scenarios" / "replay.yaml")
    assert slow_causes(reference, replay) == []
    agent = reference.consumers.agent.model_copy(update={"instances": 1024})
    big = reference.model_copy(
        update={
            "consumers": reference.consumers.model_copy(update={"agent": agent}),
            "event_log": reference.event_log.model_copy(update={"partitions": 4096}),
        }
    )
    (cause,) = slow_causes(big, replay)
    assert cause.field == "consumers.agent.instances"
    assert "1,024 instances share 4,096 partitions" in cause.message
