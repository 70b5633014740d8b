"""designlab's discrete-event simulator of durable multi-agent workflows (no web imports)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from simulator import native
from simulator.version import SIMULATOR_VERSION

# Before any engine module is imported: the compiled data plane, or its Python source when that
# is not built or stale (simulator.native).
native.select()

# The simulator's numpy work is small arrays in one thread: OpenBLAS's worker threads only spin
# (about 5% of a grade's CPU time). Set before numpy loads; an explicit setting is kept.
for _threads in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_threads, "1")

if TYPE_CHECKING:
    from simulator.design import Design
    from simulator.result import SimulationResult
    from simulator.scenario import Scenario


def simulate(
    design: Design,
    scenario: Scenario,
    seed: int | None = None,
) -> SimulationResult:
    """Simulate ``design`` under ``scenario``; see :func:`simulator.simulation.simulate`.

    Imported lazily so that reading a design or scenario does not load numpy and SimPy.
    """
    from simulator.simulation import simulate as run

    return run(design, scenario, seed)


__all__ = ["SIMULATOR_VERSION", "simulate"]
