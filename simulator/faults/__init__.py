"""The faults layer: what each fault of a scenario does to a simulation, in durability terms.

Each fault is a plug-in (a ``simulator.engine.hooks.FaultLayer``) with named hooks; the engine
imports none of them. ``simulator.simulation`` installs :func:`layers_for` a design and scenario:
the layers every simulation has, then one per fault kind the scenario names, in :data:`LAYERS`
order (which is also the order their counts and notes are added to the result):

========================  ==========================================================================
:mod:`.transient`         always: unavailability and rate limits are transient (retried with
                          backoff, never dead-lettered); only a call no provider could ever admit
                          fails for good
:mod:`.provider_outage`   always: ``ModelRouting`` (circuit breaker, fallback, response cache by
                          model version, recorded results); ``provider_outage``: ``ProviderOutages``
``worker_crash``          :mod:`.crash` (crash, session-timeout detection, restart) and
                          :mod:`.checkpoint` (the model calls coarse checkpoints make runs redo)
:mod:`.checkpoint`        runs: ``CheckpointWrites`` (checkpoint writes on the state store)
:mod:`.rebalance`         always: ``SlowBatches`` (batches over ``max_poll_interval_ms`` kick their
                          member); ``rebalance``: ``Rebalances``
``rolling_restart``       :mod:`.rolling` (``RollingRestarts``: a rolling deploy, two rebalances an
                          instance); ``member_pause``: ``MemberPauses`` (evicted past the session
                          timeout)
``state_failover``        :mod:`.failover` (writes down, async replication's lost window, rebuild)
``poison``, ``flaky``     :mod:`.poison` (stalls, dead-letter queue, per-key quarantine, order) and
                          :mod:`.flaky` (unclassified errors that clear: retried under the limit)
``broker_loss``           :mod:`.broker` (acks, min.insync.replicas, replication factor); with
                          ``follower_lag``: followers behind leave the ISR, the leader alone in sync
``consumer_pause``        :mod:`.replay` (offset expiry, ``auto.offset.reset``, replay and key ages)
``saga_failure``          :mod:`.saga` (compensations, their order and keys, the human queue)
========================  ==========================================================================

Every fault but ``flaky`` (whose retries last about a second) adds its window to
``fault_windows`` (charts shade it; ``drain_seconds`` is measured from the end of the last one),
and errors show in the errors time series.

To add a fault: a module here with a ``FaultLayer`` subclass (its ``kinds``, ``start`` and the
hooks it needs, its counts in ``contribute``), its scenario model in ``simulator.scenario``, and
its class in :data:`LAYERS`.
"""

from __future__ import annotations

from simulator.design import Design
from simulator.engine.hooks import FaultLayer
from simulator.faults.broker import BrokerLosses
from simulator.faults.checkpoint import CheckpointRework, CheckpointWrites
from simulator.faults.crash import WorkerCrashes
from simulator.faults.failover import StateFailovers
from simulator.faults.poison import PoisonEvents
from simulator.faults.provider_outage import ModelRouting, ProviderOutages
from simulator.faults.rebalance import Rebalances, SlowBatches
from simulator.faults.replay import ConsumerPauses
from simulator.faults.rolling import MemberPauses, RollingRestarts
from simulator.faults.saga import Sagas
from simulator.faults.transient import TransientRetries
from simulator.scenario import Scenario

LAYERS: tuple[type[FaultLayer], ...] = (
    TransientRetries,
    ModelRouting,
    WorkerCrashes,
    CheckpointRework,
    CheckpointWrites,
    SlowBatches,
    ProviderOutages,
    Rebalances,
    RollingRestarts,
    MemberPauses,
    StateFailovers,
    PoisonEvents,
    BrokerLosses,
    ConsumerPauses,
    Sagas,
)
"""Every fault layer, in installation order: the order in which they add their counts and notes
to the result (and hear each hook)."""

__all__ = ["LAYERS", "layers_for"]


def layers_for(design: Design, scenario: Scenario) -> list[FaultLayer]:
    """New fault layers for a simulation of ``design`` under ``scenario``: each of :data:`LAYERS`
    that it wants (``FaultLayer.wanted``), in order."""
    return [cls() for cls in LAYERS if cls.wanted(design, scenario)]
