"""The plug-in interface of the faults layer: a fault layer and its named hooks.

The engine never imports a fault. A simulation is assembled outside it (``simulator.simulation``):
the assembly builds the engine (:class:`simulator.engine.run.Simulation`), creates the fault layers
the scenario needs (``simulator.faults.layers_for``), installs them, binds their data-plane hooks
to every consumer group (:class:`GroupHooks`), runs, and lets each layer add its part of the
result. A fault layer is a :class:`FaultLayer` subclass that overrides the hooks it needs; every
hook's default does nothing, so the engine's own rule applies.

The hooks, in the order of a run:

- ``wanted(design, scenario)`` (class method): whether the simulation installs the layer (by
  default: the scenario names one of the layer's ``kinds``);
- ``install(sim, layers)``: before the run (the groups are built, nothing is simulated yet);
- ``start(sim, fault)``: the SimPy process of one scenario fault of the layer's ``kinds``, started
  in the scenario's order once the groups have formed;
- on a group's rare paths, called by the data plane (``simulator.engine.group.FaultHooks``):
  ``retry_wait`` (a rejected step), ``on_repeat`` (a repeated agent step: a redelivery or a call a
  crash abandoned), ``on_slow_batch`` (a batch that outlasted ``max_poll_interval_ms``, noticed at
  the poll after it), ``on_give_up`` (an event dead-lettered, parked or dropped),
  ``failed_attempt`` (an attempt of an event the layer marked ``ASK`` in
  ``Partition.fail_attempts``: whether it fails);
- ``on_crash``: members of a group are about to crash (raised by the worker-crash layer);
- ``finish(sim)``: after the window's last event, before the engine assembles its result (a fault
  window added here still counts for ``drain_seconds``);
- ``contribute(sim, result)``: the result with the layer's counts and notes added
  (:func:`amend`). Layers contribute in the order they were installed.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import simpy

from simulator.design import Design
from simulator.result import Metrics, SimulationResult
from simulator.scenario import Scenario

if TYPE_CHECKING:
    from simulator.engine.consumers import ConsumerGroup
    from simulator.engine.partition import Partition
    from simulator.engine.run import Simulation
    from simulator.scenario import Fault

LayerT = TypeVar("LayerT", bound="FaultLayer")


class FaultLayer:
    """One plug-in of the faults layer (the module docstring lists its hooks).

    ``kinds``: the scenario fault kinds it simulates (its :meth:`start` runs one of them). A layer
    keeps its own state and figures as attributes; other layers reach it by its class through
    :meth:`Layers.get`.
    """

    kinds: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def wanted(cls, design: Design, scenario: Scenario) -> bool:
        """Whether a simulation of ``design`` under ``scenario`` installs this layer: by default,
        when the scenario names one of its ``kinds``."""
        return any(fault.kind in cls.kinds for fault in scenario.faults)

    def install(self, sim: Simulation, layers: Layers) -> None:
        """Plug into ``sim`` before it runs (``layers``: every layer of the simulation)."""

    def start(self, sim: Simulation, fault: Fault) -> Generator[simpy.Event, Any, None]:
        """The SimPy process of ``fault`` (its kind is one of ``kinds``). Raises
        ``NotImplementedError`` for a layer that simulates no fault kind."""
        raise NotImplementedError(f"{type(self).__name__} simulates no fault kind")

    def retry_wait(self, group: ConsumerGroup, part: Partition, t: float, code: float) -> float:
        """``part``'s step was rejected at ``t`` with ``code`` (``simulator.engine.provider``'s
        REJECT_429 or REJECT_DOWN): seconds until it is tried again, or -1 for the group's own
        rule (its retry policy's attempt limit, then ``failures.retry``)."""
        return -1.0

    def on_repeat(
        self, group: ConsumerGroup, part: Partition, pos: int, t: float, completed: bool
    ) -> int:
        """The agent step at offset ``pos`` runs again at ``t`` (``completed``: it had completed
        before; else a crash abandoned its call): 0 the model is called again (counted as
        repeated), 2 answered without a call, -1 the engine's own rule."""
        return -1

    def on_slow_batch(self, group: ConsumerGroup, part: Partition, t: float) -> bool:
        """A batch of ``part`` that outlasted ``max_poll_interval_ms`` ended at ``t``: True when
        its commit fails (its member was kicked)."""
        return False

    def on_give_up(
        self, group: ConsumerGroup, part: Partition, pos: int, t: float, dead_lettered: bool
    ) -> None:
        """Offset ``pos`` of ``part`` was given up at ``t``: dead-lettered or parked
        (``dead_lettered``), else dropped."""

    def failed_attempt(self, group: ConsumerGroup, part: Partition, pos: int, t: float) -> float:
        """An attempt at ``t`` of offset ``pos``, which a layer marked ``ASK`` in
        ``part.fail_attempts``: -1 when it goes through (the step runs), else the seconds until
        it is tried again (the failure counts toward ``failures.retry.max_attempts``; at the
        limit the event is given up and the wait is unused)."""
        return -1.0

    def on_crash(self, group: ConsumerGroup, t: float, members: Sequence[int]) -> None:
        """Members ``members`` of ``group`` crash at ``t`` (called just before the crash)."""

    def finish(self, sim: Simulation) -> None:
        """After the window's last event, before the engine assembles its result."""

    def contribute(self, sim: Simulation, result: SimulationResult) -> SimulationResult:
        """``result`` with this layer's counts and notes added (itself when it has none)."""
        return result


def _overrides(layer: FaultLayer, hook: str) -> bool:
    """True when ``layer``'s class overrides ``FaultLayer``'s ``hook``."""
    return getattr(type(layer), hook) is not getattr(FaultLayer, hook)


class Layers:
    """The fault layers of one simulation, in installation (and result) order.

    Raises each hook on the layers that override it. Raises ``ValueError`` when two layers claim
    the same fault kind.
    """

    def __init__(self, layers: Sequence[FaultLayer]):
        self.all: tuple[FaultLayer, ...] = tuple(layers)
        self.by_kind: dict[str, FaultLayer] = {}
        for layer in self.all:
            for kind in layer.kinds:
                if kind in self.by_kind:
                    raise ValueError(
                        f"fault kind {kind} claimed by {type(self.by_kind[kind]).__name__} "
                        f"and {type(layer).__name__}"
                    )
                self.by_kind[kind] = layer
        self.retry_wait = [x for x in self.all if _overrides(x, "retry_wait")]
        self.on_repeat = [x for x in self.all if _overrides(x, "on_repeat")]
        self.on_slow_batch = [x for x in self.all if _overrides(x, "on_slow_batch")]
        self.on_give_up = [x for x in self.all if _overrides(x, "on_give_up")]
        self.failed_attempt = [x for x in self.all if _overrides(x, "failed_attempt")]

    def find(self, cls: type[LayerT]) -> LayerT | None:
        """The layer of class ``cls``, or None when the simulation has none."""
        for layer in self.all:
            if isinstance(layer, cls):
                return layer
        return None

    def get(self, cls: type[LayerT]) -> LayerT:
        """The layer of class ``cls``. Raises ``LookupError`` when the simulation has none."""
        layer = self.find(cls)
        if layer is None:
            raise LookupError(f"no {cls.__name__} layer in this simulation")
        return layer

    def install(self, sim: Simulation) -> None:
        """Install every layer in order, then bind the data-plane hooks to every group."""
        for layer in self.all:
            layer.install(sim, self)
        for group in sim.groups.values():
            group.faults = GroupHooks(group, self)

    def on_crash(self, group: ConsumerGroup, t: float, members: Sequence[int]) -> None:
        """Tell every layer that members ``members`` of ``group`` crash at ``t``."""
        for layer in self.all:
            layer.on_crash(group, t, members)

    def finish(self, sim: Simulation) -> None:
        """Every layer's :meth:`FaultLayer.finish`, in order."""
        for layer in self.all:
            layer.finish(sim)

    def contribute(self, sim: Simulation, result: SimulationResult) -> SimulationResult:
        """``result`` with every layer's part added, in order."""
        for layer in self.all:
            result = layer.contribute(sim, result)
        return result


class GroupHooks:
    """The layers' data-plane hooks bound to one group (it is the group's ``faults``).

    A rejected step, a repeated step and an attempt of an ``ASK`` event take the first layer's
    answer that is not -1; a slow batch is a kick when a layer says so; every layer hears of an
    event given up.
    """

    __slots__ = ("group", "layers")

    def __init__(self, group: ConsumerGroup, layers: Layers):
        self.group = group
        self.layers = layers

    def retry_wait(self, part: Partition, t: float, code: float) -> float:
        """See :meth:`FaultLayer.retry_wait`."""
        for layer in self.layers.retry_wait:
            wait = layer.retry_wait(self.group, part, t, code)
            if wait >= 0.0:
                return wait
        return -1.0

    def on_repeat(self, part: Partition, pos: int, t: float, completed: bool) -> int:
        """See :meth:`FaultLayer.on_repeat`."""
        for layer in self.layers.on_repeat:
            how = layer.on_repeat(self.group, part, pos, t, completed)
            if how >= 0:
                return how
        return -1

    def on_slow_batch(self, part: Partition, t: float) -> bool:
        """See :meth:`FaultLayer.on_slow_batch`."""
        return any(layer.on_slow_batch(self.group, part, t) for layer in self.layers.on_slow_batch)

    def on_give_up(self, part: Partition, pos: int, t: float, dead_lettered: bool) -> None:
        """See :meth:`FaultLayer.on_give_up`."""
        for layer in self.layers.on_give_up:
            layer.on_give_up(self.group, part, pos, t, dead_lettered)

    def failed_attempt(self, part: Partition, pos: int, t: float) -> float:
        """See :meth:`FaultLayer.failed_attempt`."""
        for layer in self.layers.failed_attempt:
            wait = layer.failed_attempt(self.group, part, pos, t)
            if wait >= 0.0:
                return wait
        return -1.0


def amend(
    result: SimulationResult, notes: Sequence[str] = (), **metrics: float | None
) -> SimulationResult:
    """``result`` with the named ``metrics`` (fields of :class:`simulator.result.Metrics`) set
    and ``notes`` appended; ``result`` itself when there is nothing to change. Raises
    ``ValueError`` for a name that is not a metric."""
    unknown = sorted(set(metrics) - set(Metrics.model_fields))
    if unknown:
        raise ValueError(f"not metrics of a result: {', '.join(unknown)}")
    if not metrics and not notes:
        return result
    changed = result.metrics.model_copy(update=metrics)
    return result.model_copy(update={"metrics": changed, "notes": [*result.notes, *notes]})
