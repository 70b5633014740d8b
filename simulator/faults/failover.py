"""``state_failover``: the state store's primary is lost at ``at_seconds``.

Writes fail until a replica is promoted, ``state_store.failover_seconds`` later (automatic, about
30-40 s with a Patroni-style ttl plus loop; manual, minutes). With no replica there is nothing to
promote and writes stay down for the rest of the window. The state writers treat the failure as
transient: each retries its write with ``failures.retry``'s backoff (capped, jittered) until the new
primary answers, never dead-letters it, and commits no offset past it, so the state group's lag
grows during the failover and drains after (:class:`simulator.faults.hooks.GroupHooks`).

What the new primary is missing: with ``replication: sync`` nothing (a write is acknowledged once a
replica has it); with ``async`` the writes acknowledged in the last ``replication_lag_ms`` before
the loss, the ones that had not reached the replica. When the design keeps its state rebuildable
from the event log (``data_model.state_rebuildable_from_log``) they are replayed from the log and
counted in ``state_writes_rebuilt``; otherwise they are gone, counted in ``state_writes_lost``.
These are applied effects that vanished from the store, not events the pipeline failed to process:
``lost`` does not count them.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import simpy

from simulator.design import Replication
from simulator.result import FaultWindow
from simulator.scenario import StateFailover

if TYPE_CHECKING:
    from simulator.engine.run import Simulation


@dataclass
class FailoverOutcome:
    """One failover: when writes were down, and the acknowledged writes the new primary lacks."""

    start_s: float
    end_s: float
    window_start_s: float
    missing: int = 0
    rebuilt: int = 0
    lost: int = 0


def state_failover(sim: Simulation, fault: StateFailover) -> Generator[simpy.Event, Any, None]:
    """SimPy process of a ``state_failover``: sets the store's down window at time 0."""
    store = sim.design.state_store
    start = float(fault.at_seconds)
    # With no replica nothing can be promoted: writes stay down past the end of the window.
    end = start + store.failover_seconds if store.replicas >= 1 else max(sim.duration, start) + 1
    sim.store.add_outage(start, end)
    lag_s = store.replication_lag_ms / 1000.0 if store.replication is Replication.async_ else 0.0
    if store.replicas < 1:
        lag_s = 0.0
    outcome = FailoverOutcome(start, end, start - lag_s)
    sim.extensions.setdefault("failovers", []).append(outcome)
    sim.fault_windows.append(FaultWindow(kind=fault.kind, start_s=start, end_s=end))
    return
    yield  # a process that acts at time 0 only


def count_missing(sim: Simulation, outcome: FailoverOutcome) -> None:
    """Fill ``outcome`` after the run: state writes acknowledged in the replication-lag window."""
    if outcome.window_start_s >= outcome.start_s:
        return
    _, finishes = sim.first_times("state")
    done = finishes[np.isfinite(finishes)]
    missing = int(np.count_nonzero((done >= outcome.window_start_s) & (done < outcome.start_s)))
    outcome.missing = missing
    if sim.design.data_model.state_rebuildable_from_log:
        outcome.rebuilt = missing
    else:
        outcome.lost = missing
