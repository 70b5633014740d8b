"""The consumer groups' names have one home, which the design and the scenario follow."""

from __future__ import annotations

from typing import get_args

from simulator.design import ConsumersSection, Design
from simulator.groups import GROUPS, GroupName
from simulator.scenario import ConsumerPause, Poison, Rebalance, WorkerCrash


def test_the_design_has_one_consumer_group_per_name_in_order() -> None:
    assert tuple(ConsumersSection.model_fields) == GROUPS == ("agent", "tool", "state")
    design = Design()
    for name in GROUPS:
        assert design.consumers.by_name(name) is getattr(design.consumers, name)


def test_every_fault_that_names_a_group_takes_the_same_names() -> None:
    for fault in (WorkerCrash, Rebalance, Poison, ConsumerPause):
        assert get_args(fault.model_fields["group"].annotation) == get_args(GroupName)
