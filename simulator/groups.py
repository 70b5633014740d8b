"""The three consumer groups of a design, by name: the one place their names are defined.

Every design has an ``agent`` group (agent steps, each a model call), a ``tool`` group (tool calls
on the runner fleet) and a ``state`` group (writes to the state store). The design's
``consumers`` section, the scenario's faults, the estimate, the simulation, the cost model and the
web pages all name a group with :data:`GroupName` and walk the groups in :data:`GROUPS` order.
"""

from __future__ import annotations

from typing import Literal, get_args

GroupName = Literal["agent", "tool", "state"]
"""A consumer group's name."""

GROUPS: tuple[GroupName, ...] = get_args(GroupName)
"""The three consumer groups, in the order the estimate and the simulator process them."""
