"""The state store as the state group sees it: write capacity and write latency.

- **Latency**: a write takes the design's ``state_store.write_latency_ms``. The scenario's
  ``step_time.state_write`` distribution gives its variability: each drawn step time is scaled by
  ``write_latency_ms / 1000 / state_write.mean_seconds`` (:func:`latency_scale`), so the mean is the
  store's latency and the shape is the scenario's.
- **Capacity**: writes are admitted no faster than ``write_capacity_per_second``: write ``k`` may
  start at ``max(t, previous admission + 1 / capacity)`` (a virtual-clock rate limiter, first come
  first served). A write that has to wait keeps its partition blocked.
- **Unavailability** (``add_outage``, for the faults layer's failover): inside a window writes fail
  with REJECT_DOWN and the writer retries with backoff (``design.failures.retry``), committing no
  offset past a failed write.
"""

from __future__ import annotations

from simulator.design import StateStoreSection
from simulator.engine.provider import REJECT_DOWN, Interruptible, Windows


def latency_scale(store: StateStoreSection, scenario_mean_s: float) -> float:
    """Factor turning the scenario's state-write step times into the store's latency (>= 0)."""
    if scenario_mean_s <= 0:
        return 1.0
    return store.write_latency_ms / 1000.0 / scenario_mean_s


class StateStore(Interruptible):
    """Rate-limited admission of state writes; ``admit(t, step_s)`` returns the write's finish."""

    def __init__(self, store: StateStoreSection):
        self.spec = store
        self.spacing_s = 1.0 / store.write_capacity_per_second
        self.next_free = 0.0
        self.outages = Windows()
        self.rejected_down = 0

    def reserve(self, writes_per_s: float, min_share: float) -> None:
        """Keep ``writes_per_s`` of the capacity for other writers (checkpoints): the state
        group's writes are admitted at the capacity left, never below ``min_share`` of it."""
        capacity = self.spec.write_capacity_per_second
        left = max(capacity - writes_per_s, capacity * min_share)
        self.spacing_s = 1.0 / left

    def admit(self, t: float, step_s: float) -> float:
        """Admit a write asked for at ``t`` taking ``step_s``: finish time, or REJECT_DOWN."""
        if self.outages.first <= t and self.refused_down(t):
            return REJECT_DOWN
        nxt = self.next_free
        start = nxt if nxt > t else t
        self.next_free = start + self.spacing_s
        return start + step_s
