"""Little's law, utilisation, backlog after an outage and the time to drain it.

- Little's law, L = lambda W (J. D. C. Little, "A Proof for the Queuing Formula L = lambda W",
  Operations Research 9(3), 1961): events in flight = arrival rate x time in the system.
- Backlog after an outage = arrivals x outage; drain time = backlog / (capacity - arrivals), never
  when capacity <= arrivals (fluid approximation of a queue after a service interruption).

Units: rates in step events per second (``_eps``), times in seconds.
"""

from __future__ import annotations

import math

_EPS = 1e-12


def little_in_flight(rate_eps: float, time_s: float) -> float:
    """Events in flight L = lambda x W (Little 1961).

    ``little_in_flight(20, 2.0)`` is 40: 20 events/s each taking 2.0 s keep 40 in progress, so at
    least 40 partitions must be busy. Raises ``ValueError`` for a negative rate or time.
    """
    if rate_eps < 0 or time_s < 0:
        raise ValueError("rate and time must be >= 0")
    return rate_eps * time_s


def utilisation(arrivals_eps: float, capacity: float) -> float:
    """Offered load over capacity, rho = lambda / capacity (0 when idle, ``math.inf`` when there
    is load and no capacity). ``utilisation(20, 24)`` is 0.8333."""
    if arrivals_eps <= 0:
        return 0.0
    if capacity <= 0:
        return math.inf
    return arrivals_eps / capacity


def backlog_after_outage(rate_eps: float, seconds: float, capacity_during: float = 0.0) -> float:
    """Events waiting after ``seconds`` with arrivals ``rate_eps`` and ``capacity_during`` left.

    (rate - capacity during) x seconds, at least 0; with nothing processing, 20 x 180 = 3,600.
    Fluid approximation: arrivals and service at their mean rates. Raises ``ValueError`` for a
    negative argument.
    """
    if rate_eps < 0 or seconds < 0 or capacity_during < 0:
        raise ValueError("rate, seconds and capacity must be >= 0")
    return max(0.0, (rate_eps - capacity_during) * seconds)


def backlog_per_partition(backlog: float, partitions: int) -> float:
    """Backlog spread evenly over partitions: 3,600 / 48 = 75. ``ValueError`` if partitions < 1."""
    if partitions < 1:
        raise ValueError(f"partitions must be >= 1, got {partitions}")
    return backlog / partitions


def drain_seconds(backlog: float, capacity: float, arrivals_eps: float) -> float | None:
    """Seconds to clear ``backlog`` while arrivals continue: backlog / (capacity - arrivals).

    Returns 0.0 for no backlog and ``None`` when capacity <= arrivals: the backlog never drains.
    Worked numbers: 210 / (45 - 30) = 14 s; 3,600 / (24 - 20) = 900 s; capacity 20 = arrivals 20
    gives ``None``. Fluid approximation (mean rates). Raises ``ValueError`` for a negative backlog.
    """
    if backlog < 0:
        raise ValueError(f"backlog must be >= 0, got {backlog}")
    if backlog == 0:
        return 0.0
    headroom = capacity - arrivals_eps
    if headroom <= _EPS * max(1.0, abs(capacity)):
        return None
    return backlog / headroom


def never_drains_note(capacity: float, arrivals_eps: float) -> str:
    """The sentence the product shows when a backlog cannot drain."""
    return (
        f"Never drains: capacity {capacity:.4g} events/s is not above arrivals "
        f"{arrivals_eps:.4g} events/s, so the backlog stays or grows."
    )
