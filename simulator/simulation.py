"""A simulation assembled: the engine, the fault layers its scenario needs, the run, the result.

The engine (``simulator.engine``) imports no fault, and the faults (``simulator.faults``) plug into
it only through the named hooks of ``simulator.engine.hooks``. This module puts them together:

1. build the engine (:class:`simulator.engine.run.Simulation`: the workload's topics, the consumer
   groups, the provider, runner pool and state store);
2. create the fault layers the scenario needs (``simulator.faults.layers_for``), install them in
   order and bind their data-plane hooks to every group;
3. run: form the groups (and auto-commit ticks), start one SimPy process per scenario fault in the
   scenario's order (a kind no layer simulates is noted), run every control event to the end of
   the window, then the layers' ``finish``;
4. the engine's result, then each layer's contribution (counts and notes) in order.

``simulate`` (re-exported as ``simulator.simulate``) does all of it from a design and a scenario;
``run_workload`` from an explicit workload; :func:`assemble` stops before the run, for a caller
that wants to look at the engine or a layer.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from typing import TypeVar

import simpy

from simulator.design import Design
from simulator.engine.hooks import FaultLayer, Layers
from simulator.engine.run import Simulation, make_rngs
from simulator.engine.workload import Workload, build_workload
from simulator.faults import layers_for
from simulator.result import SimulationResult
from simulator.scenario import Scenario

LayerT = TypeVar("LayerT", bound=FaultLayer)

CDC_RELAY_POLL_MS = 1.0
"""Milliseconds between polls of the relay ``model_wait_without_relay_mean_s`` is measured with: a
relay tailing the database's transaction log (change data capture), which publishes each outbox
row as it commits instead of in bursts (``simulator.engine.outbox``)."""


class Assembly:
    """One simulation ready to run: ``engine`` (the SimPy engine) and ``layers`` (its installed
    fault layers, in result order)."""

    def __init__(self, engine: Simulation, layers: Layers):
        self.engine = engine
        self.layers = layers

    def layer(self, cls: type[LayerT]) -> LayerT:
        """The installed layer of class ``cls``. Raises ``LookupError`` when there is none."""
        return self.layers.get(cls)

    def run(self) -> SimulationResult:
        """Run the window to its end and assemble the result (seed 0: the caller sets it)."""
        sim = self.engine
        sim.start()
        for fault in sim.scenario.faults:
            layer = self.layers.by_kind.get(fault.kind)
            if layer is None:
                sim.notes.append(f"fault {fault.kind} is not simulated by the core simulator")
                continue
            sim.env.process(layer.start(sim, fault))
        sim.run_to_end()
        self.layers.finish(sim)
        return self.layers.contribute(sim, sim.result())

    def release(self) -> None:
        """Drop the engine's per-event state once the result is out (``Simulation.release``)."""
        self.engine.release()


def assemble(
    design: Design,
    scenario: Scenario,
    workload: Workload,
    seed: int,
    *,
    env: simpy.Environment | None = None,
) -> Assembly:
    """The simulation of ``workload`` under ``design`` and ``scenario``'s faults, with its fault
    layers installed, not yet run. ``seed`` seeds the groups' retry jitter (the workload is
    already drawn); ``env``: the SimPy environment to use (a fresh one by default)."""
    _, rngs = make_rngs(seed)
    sim = Simulation(env or simpy.Environment(), design, scenario, workload, rngs)
    layers = Layers(layers_for(design, scenario))
    layers.install(sim)
    return Assembly(sim, layers)


def run_workload(
    design: Design,
    scenario: Scenario,
    workload: Workload,
    seed: int,
    *,
    env: simpy.Environment | None = None,
) -> SimulationResult:
    """Simulate an explicit ``workload`` (e.g. :meth:`Workload.from_arrays`) under ``scenario``'s
    faults. ``env``: the SimPy environment to use (a fresh one by default)."""
    assembly = assemble(design, scenario, workload, seed, env=env)
    result = assembly.run()
    assembly.release()
    return result.model_copy(update={"seed": seed})


def simulate(design: Design, scenario: Scenario, seed: int | None = None) -> SimulationResult:
    """Simulate ``design`` under ``scenario`` and return its metrics and time series (the monthly
    cost is ``simulator.cost.monthly_cost`` of the metrics, added by whoever prices the run).

    ``model_wait_without_relay_mean_s``, the model gateway's wait without the outbox relay's
    bursts (a slow relay publishes each poll's events at once, and a burst above the limits'
    second's allowance waits at the gateway however large the limits are): the same design, scenario
    and seed run again with a change-data-capture relay (:data:`CDC_RELAY_POLL_MS`), its
    ``model_wait_mean_s``. It is this run's own wait when no relay polls slower than that or no call
    waited (nothing to take out), and None in a scenario with faults (not measured: waits there are
    the recovery's, not the limits' sizing for a steady load).

    ``seed`` (default: ``scenario.seed``) seeds every random draw. Same design, scenario, seed and
    ``SIMULATOR_VERSION`` give byte-identical ``result.model_dump_json()``. Raises ``ValueError``
    when the scenario would produce more than ``simulator.engine.workload.MAX_EVENTS`` step events.
    """
    seed = scenario.seed if seed is None else seed
    result = _simulate_once(design, scenario, seed)
    metrics = result.metrics
    wait = metrics.model_wait_mean_s
    relay = design.data_model
    relay_free: float | None = wait
    if scenario.faults:
        relay_free = None
    elif relay.outbox and relay.outbox_relay_poll_interval_ms > CDC_RELAY_POLL_MS and wait > 0.0:
        cdc = design.model_copy(
            update={
                "data_model": relay.model_copy(
                    update={"outbox_relay_poll_interval_ms": CDC_RELAY_POLL_MS}
                )
            }
        )
        relay_free = _simulate_once(cdc, scenario, seed).metrics.model_wait_mean_s
    return result.model_copy(
        update={
            "metrics": metrics.model_copy(update={"model_wait_without_relay_mean_s": relay_free})
        }
    )


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the block, on again after it if it was on.

    A run allocates its per-partition lists and objects at once and keeps them to its end: the
    collector's passes over them, which can free none of them, were about 5 % of a run's time
    (benchmarks/simulator.py (b)), and a grade's peak RSS was higher with them. Whatever a run
    leaves in reference cycles is collected after it. Reference counting frees everything else
    as usual. Two threads may pause it at once: it is on again once the last pause that found
    it on has ended."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
            # The run's survivors all sit in the youngest generation: collecting it now frees
            # the run's reference cycles before the next run allocates (about 1 ms a run; left
            # to the collector's own count, they lived on to a grade's peak RSS, 13 MB more).
            gc.collect(0)


def _simulate_once(design: Design, scenario: Scenario, seed: int) -> SimulationResult:
    """One run of :func:`simulate`, without ``model_wait_without_relay_mean_s``."""
    with collector_paused():
        env = simpy.Environment()
        workload_rng, _ = make_rngs(seed)
        workload = build_workload(design, scenario, workload_rng)
        assembly = assemble(design, scenario, workload, seed, env=env)
        result = assembly.run().model_copy(update={"seed": seed})
        assembly.release()
    return result
