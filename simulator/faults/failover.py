"""``state_failover``: the state store's primary is lost at ``at_seconds``.

Writes fail until a replica is promoted, ``state_store.promote_seconds`` later: the design's
``failover_seconds`` (automatic, about 30-40 s with a Patroni-style ttl plus loop), by hand never
less than ``MANUAL_FAILOVER_MIN_S`` (300 s: someone must be paged first). With no replica there is
nothing to promote and writes stay down for the rest of the window. The state writers treat the
failure as transient: each retries its write with ``failures.retry``'s backoff (capped, jittered)
until the new primary answers, never dead-letters it, and commits no offset past it, so the state
group's lag grows during the failover and drains after
(:class:`simulator.faults.transient.TransientRetries`).

What the new primary is missing: with ``replication: sync`` nothing (a write is acknowledged once a
replica has it); with ``async`` the writes acknowledged in the last ``replication_lag_ms`` before
the loss, the ones that had not reached the replica. When the design keeps its state rebuildable
from the event log (``data_model.state_rebuildable_from_log``, and an append-only log of every
change to replay: ``data_model.append_only_event_log``) they are replayed from the log and counted
in ``state_writes_rebuilt``; otherwise they are gone, counted in ``state_writes_lost``.

``state_writes_refused_s``: from the first write the store refused to the last (its RTO as the
writers met it). ``write_retry_delay_s``: the mean, over the state writes waiting when the store
came back, of how long after the store's return each was tried again for the last time: the
writers' backoff at work (without jitter they wait out the
schedule's next step together; with full jitter a random share of it).

The writes lost or rebuilt are applied effects that vanished from the store, not events the
pipeline failed to process: ``lost`` does not count them.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import simpy

from simulator.design import Replication
from simulator.engine.hooks import FaultLayer, Layers, amend
from simulator.engine.metrics import sig
from simulator.faults.transient import TransientRetries
from simulator.result import FaultWindow, SimulationResult
from simulator.scenario import StateFailover

if TYPE_CHECKING:
    from simulator.engine.run import Simulation
    from simulator.scenario import Fault


@dataclass
class FailoverOutcome:
    """One failover: when writes were down, and the acknowledged writes the new primary lacks."""

    start_s: float
    end_s: float
    window_start_s: float
    missing: int = 0
    rebuilt: int = 0
    lost: int = 0


class StateFailovers(FaultLayer):
    """``state_failover`` faults (see the module docstring): one :class:`FailoverOutcome` per
    fault in ``outcomes``. Contributes ``state_writes_lost``, ``state_writes_rebuilt`` and a note
    per failover."""

    kinds = ("state_failover",)

    def __init__(self) -> None:
        self.outcomes: list[FailoverOutcome] = []
        self.retries: TransientRetries | None = None

    def install(self, sim: Simulation, layers: Layers) -> None:
        """Find the transient retries whose backoff the failover's writers use."""
        self.retries = layers.get(TransientRetries)

    def start(self, sim: Simulation, fault: Fault) -> Generator[simpy.Event, Any, None]:
        """SimPy process of a ``state_failover``: sets the store's down window at time 0."""
        assert isinstance(fault, StateFailover)
        store = sim.design.state_store
        start = float(fault.at_seconds)
        # With no replica nothing can be promoted: writes stay down past the end of the window.
        end = start + store.promote_seconds if store.replicas >= 1 else max(sim.duration, start) + 1
        sim.store.add_outage(start, end)
        lag_s = (
            store.replication_lag_ms / 1000.0 if store.replication is Replication.async_ else 0.0
        )
        if store.replicas < 1:
            lag_s = 0.0
        outcome = FailoverOutcome(start, end, start - lag_s)
        self.outcomes.append(outcome)
        sim.fault_windows.append(FaultWindow(kind=fault.kind, start_s=start, end_s=end))
        return
        yield  # a process that acts at time 0 only

    def finish(self, sim: Simulation) -> None:
        """Count each failover's missing writes (:func:`count_missing`)."""
        for outcome in self.outcomes:
            count_missing(sim, outcome)

    def contribute(self, sim: Simulation, result: SimulationResult) -> SimulationResult:
        """The writes lost and rebuilt, and a note per failover."""
        if not self.outcomes:
            return result
        notes = [
            f"state failover {f.start_s:g}-{f.end_s:g} s: {f.missing} acknowledged writes "
            f"missing on the new primary ({f.rebuilt} rebuilt from the log, {f.lost} lost)"
            for f in self.outcomes
        ]
        delays = [d for f in self.outcomes for d in resumed_after(f, self.retries, sim.duration)]
        return amend(
            result,
            notes,
            state_writes_lost=sum(f.lost for f in self.outcomes),
            state_writes_rebuilt=sum(f.rebuilt for f in self.outcomes),
            write_retry_delay_s=sig(float(np.mean(delays))) if delays else None,
            state_writes_refused_s=sig(sim.store.last_down_s - sim.store.first_down_s)
            if sim.store.rejected_down
            else 0.0,
        )


def resumed_after(
    outcome: FailoverOutcome, retries: TransientRetries | None, duration_s: float
) -> list[float]:
    """Seconds after the store's return each refused state write was tried again for the last
    time (the try that went through): the writers' backoff, not the store's queue after."""
    if retries is None or outcome.end_s > duration_s:
        return []
    return [
        at - outcome.end_s
        for at in retries.state_retry_at.values()
        if outcome.end_s <= at <= duration_s
    ]


def count_missing(sim: Simulation, outcome: FailoverOutcome) -> None:
    """Fill ``outcome`` after the run: state writes acknowledged in the replication-lag window."""
    if outcome.window_start_s >= outcome.start_s:
        return
    _, finishes = sim.first_times("state")
    done = finishes[np.isfinite(finishes)]
    missing = int(np.count_nonzero((done >= outcome.window_start_s) & (done < outcome.start_s)))
    outcome.missing = missing
    model = sim.design.data_model
    # A rebuild replays the changes from the log: the log must hold every change (append-only).
    if model.state_rebuildable_from_log and model.append_only_event_log:
        outcome.rebuilt = missing
    else:
        outcome.lost = missing
