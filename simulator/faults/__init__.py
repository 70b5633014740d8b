"""The faults layer: what each fault of a scenario does to a simulation, in durability terms.

:func:`install` is called by ``simulator.engine.run.Simulation`` when it is built. It plugs into
the engine's hook points and registers one SimPy process per fault kind:

==================  ============================================================================
``worker_crash``    the engine's own crash and redelivery; :mod:`.checkpoint` adds the model calls
                    coarse checkpoints make runs redo; :mod:`.provider_outage` decides which
                    repeated calls the response cache answers
``rebalance``       :mod:`.rebalance` (also: slow batches over ``max_poll_interval_ms``, always on)
``consumer_pause``  :mod:`.replay` (offset expiry, ``auto.offset.reset``, replay and key ages)
``state_failover``  :mod:`.failover` (writes down, async replication's lost window, rebuild)
``provider_outage`` :mod:`.provider_outage` (circuit breaker, fallback, cache by model version)
``poison``          :mod:`.poison` (stalls, dead-letter queue, per-key quarantine, order)
``broker_loss``     :mod:`.broker` (acks, min.insync.replicas, replication factor)
``saga_failure``    :mod:`.saga` (compensations, their order and keys, the human queue)
==================  ============================================================================

Unavailability (a provider outage, a failover) and rate limits are transient failures everywhere:
consumers retry with backoff and never dead-letter for them (:mod:`.hooks`); only a call no
provider could ever admit fails for good. Every fault adds its window to
``fault_windows`` (charts shade it; ``drain_seconds`` is measured from the end of the last one),
and errors show in the errors time series.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from simulator.faults.broker import broker_loss
from simulator.faults.checkpoint import CheckpointRework
from simulator.faults.failover import state_failover
from simulator.faults.hooks import GroupHooks
from simulator.faults.poison import poison_fault
from simulator.faults.provider_outage import RepeatPolicy, build_router, provider_outage
from simulator.faults.rebalance import SlowBatchKicks, rebalance_fault
from simulator.faults.replay import consumer_pause
from simulator.faults.results import finish, merge_result
from simulator.faults.saga import saga_fault

if TYPE_CHECKING:
    from simulator.engine.run import Simulation

__all__ = ["install"]


def install(sim: Simulation) -> None:
    """Plug the faults layer into ``sim`` (before it runs): group hooks, the model router, the
    checkpoint rework on crashes, one handler per fault kind and the result figures."""
    model = sim.design.model
    tokens = sim.workload.tokens_per_call
    never_admitted = tokens > model.primary.tpm and (
        not model.fallback.enabled or tokens > model.fallback.tpm
    )
    for group in sim.groups.values():
        hooks = GroupHooks(group, rate_limit_is_permanent=never_admitted)
        group.faults = hooks
        sim.extensions.setdefault("hooks", {})[group.name] = hooks
        kicks = SlowBatchKicks(sim, group)
        hooks.slow_batch = kicks.on_slow_batch
        sim.env.process(kicks.watchdog())
        sim.extensions.setdefault("kicks", {})[group.name] = kicks
    router = build_router(sim)
    agent = sim.groups["agent"]
    if router is not None:
        agent.stage = router
        sim.extensions["router"] = router
    repeat = RepeatPolicy(sim.design, router)
    sim.extensions["hooks"]["agent"].repeat = repeat
    sim.extensions["repeat"] = repeat
    rework = CheckpointRework(sim.design, sim.topics["agent"])
    sim.extensions["rework"] = rework
    if sim.scenario.load.runs_per_second is not None:
        sim.crash_hooks.append(rework.on_crash)
    sim.fault_handlers.update(
        {
            "rebalance": rebalance_fault,
            "consumer_pause": consumer_pause,
            "state_failover": state_failover,
            "provider_outage": provider_outage,
            "poison": poison_fault,
            "broker_loss": broker_loss,
            "saga_failure": saga_fault,
        }
    )
    sim.finish_hooks.append(lambda: finish(sim))
    sim.result_hooks.append(lambda result: merge_result(sim, result))
