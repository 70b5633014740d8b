"""The SimPy simulator core: workload, event log, consumer groups, provider, state store, runners.

``simulate(design, scenario, seed)`` is the entry point (re-exported as ``simulator.simulate``).
"""

from simulator.engine.run import Simulation, run_workload, simulate
from simulator.engine.workload import Workload

__all__ = ["Simulation", "Workload", "run_workload", "simulate"]
