"""The transactional outbox's relay: when an event written to the outbox reaches the event log.

With ``data_model.outbox`` a step's state change and the event it emits are written in one local
transaction; a relay polls the outbox table every ``outbox_relay_poll_interval_ms`` and publishes
the rows it finds, in row order (Chris Richardson, microservices.io, "Pattern: Transactional
outbox" and "Pattern: Polling publisher"). So every step event is written at its workload time
(the *write time*) and appended to the log at the relay's next poll (the *publish time*):

    publish = phase + ceil((write - phase) / interval) x interval

``phase`` (seconds in ``[0, interval)``) is where the relay's polls fall, drawn once per
simulation with the seeded generator. An event written at a uniformly random moment between two
polls waits ``interval / 2`` on average and at most one ``interval``. Publish times are a
non-decreasing function of write times, so the relay keeps the order of the rows (per partition
and overall), and the events written during one interval reach the log together, as a burst.
In deterministic mode (``scenario.deterministic``) every event waits exactly the mean,
``interval / 2``: a constant, like the mode's constant step times (a fixed grid of polls against
evenly spaced arrivals would alias into delays of all 0 or all ``interval``).

The delay counts in every step event's latency (measured from the write time,
``simulator.engine.eventlog.Topic.written_s``), not in its wait in the log (measured from the
publish time). Without an outbox the service publishes right after its commit: no relay delay
(and the dual write loses the next event of a step whose service crashes between the commit and
the publish: ``simulator.engine.causal.CausalRuns.applied``). The relay's own publish time and a
polling relay's database load are not modelled; tailing the database's transaction log (change
data capture) instead of polling is a relay whose interval is near zero.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

import numpy as np

from simulator.design import Design


@dataclass(frozen=True)
class OutboxRelay:
    """A polling relay: ``interval_s`` seconds between polls; polls at ``phase_s + k x
    interval_s``, or ``phase_s`` None for the deterministic mode's constant mean delay."""

    interval_s: float
    phase_s: float | None

    @property
    def mean_delay_s(self) -> float:
        """The mean wait of an event in the outbox: half the poll interval, seconds."""
        return self.interval_s / 2.0

    def publish_times(self, written_s: np.ndarray) -> np.ndarray:
        """When each event written at ``written_s`` (seconds, shape ``(n,)``) reaches the log:
        the first poll at or after its write (shape ``(n,)`` float64, non-decreasing where
        ``written_s`` is)."""
        written = np.asarray(written_s, dtype=np.float64)
        if self.phase_s is None:
            return written + self.mean_delay_s
        polls = np.ceil((written - self.phase_s) / self.interval_s)
        return np.maximum(self.phase_s + polls * self.interval_s, written)

    def publish_time(self, written_s: float) -> float:
        """:meth:`publish_times` of one write time (seconds)."""
        if self.phase_s is None:
            return written_s + self.mean_delay_s
        polls = math.ceil((written_s - self.phase_s) / self.interval_s)
        poll_s = self.phase_s + polls * self.interval_s
        return written_s if written_s > poll_s else poll_s  # max(poll_s, written_s)


def outbox_relay(design: Design, deterministic: bool, rng: random.Random) -> OutboxRelay | None:
    """The design's relay (None without an outbox); ``rng`` draws the phase of its polls
    (unused in deterministic mode)."""
    model = design.data_model
    if not model.outbox:
        return None
    interval = model.outbox_relay_poll_interval_ms / 1000.0
    if deterministic:
        return OutboxRelay(interval, None)
    return OutboxRelay(interval, rng.random() * interval)
