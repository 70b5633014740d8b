"""The SimPy simulator core: workload, event log, consumer groups, provider, state store, runners.

It simulates no fault by itself and imports none: ``simulator.simulation`` assembles the engine
with the fault layers of ``simulator.faults`` (plugged in through ``simulator.engine.hooks``);
``simulator.simulate`` is the entry point.
"""

from simulator.engine.run import Simulation, make_rngs
from simulator.engine.workload import Workload

__all__ = ["Simulation", "Workload", "make_rngs"]
