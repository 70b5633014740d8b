"""The closed-form estimate of a design under a scenario: what the live panel shows while a
learner types, and what the simulation is checked against.

- :mod:`~simulator.estimate.estimator`: :func:`estimate`, putting the closed forms together;
- :mod:`~simulator.estimate.outages`: the backlog each fault leaves and what drains it;
- :mod:`~simulator.estimate.figures`: the figures it returns (:class:`Estimate`).

The simulation never imports this package; both share :mod:`simulator.capacity` and
:mod:`simulator.fan_out`.
"""

from __future__ import annotations

from simulator.estimate.estimator import estimate
from simulator.estimate.figures import Estimate, GroupEstimate, ModelLoad

__all__ = ["Estimate", "GroupEstimate", "ModelLoad", "estimate"]
