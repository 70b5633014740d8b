"""Queueing theory: waits in a queue of one server (Kingman) and of a pool (Erlang B and C).

- G/G/1 by Kingman's approximation (J. F. C. Kingman, "The single server queue in heavy traffic",
  Proc. Cambridge Phil. Soc. 57, 1961); exact for M/G/1, where it is the Pollaczek-Khinchine
  formula (F. Pollaczek 1930, A. Y. Khinchine 1932): M/M/1 with both squared coefficients of
  variation 1, M/D/1 with a constant service (0).
- Erlang B and C (A. K. Erlang, 1917; L. Kleinrock, "Queueing Systems, Volume 1: Theory", Wiley
  1975, ch. 3) for pooled capacity such as a model provider's concurrency limit.

Rates are per unit of time and waits come back in that unit (seconds in the estimate).
"""

from __future__ import annotations

import math

from simulator.scenario import StepTime


def saturated(rho: float) -> bool:
    """rho >= 1, allowing for rounding (1.4 / 0.1 is 13.999999999999998, not 14)."""
    return rho >= 1 - 1e-12


def _rates(arrival: float, service: float) -> float:
    if arrival < 0:
        raise ValueError(f"arrival rate must be >= 0, got {arrival}")
    if service <= 0:
        raise ValueError(f"service rate must be > 0, got {service}")
    return arrival / service


def kingman_wait(
    arrival_rate: float, mean_service: float, arrival_scv: float, service_scv: float
) -> float:
    """G/G/1 mean wait in queue by Kingman's approximation (Kingman 1961):
    Wq ~ rho / (1 - rho) x (Ca^2 + Cs^2) / 2 x E[S].

    Exact for M/G/1 (Ca^2 = 1, the Pollaczek-Khinchine formula): M/M/1 at arrival 3/s and mean
    service 0.2 s waits 0.3 s; M/D/1 at 20/h and 1/30 h waits 1/30 h, half the M/M/1 wait. Zero for
    evenly spaced arrivals with constant service (D/D/1). Returns ``inf`` when rho >= 1. Raises
    ``ValueError`` for a mean service <= 0, a negative arrival rate or coefficient.
    """
    if mean_service <= 0:
        raise ValueError(f"mean_service must be > 0, got {mean_service}")
    if arrival_scv < 0 or service_scv < 0:
        raise ValueError("squared coefficients of variation must be >= 0")
    rho = _rates(arrival_rate, 1 / mean_service)
    if saturated(rho):
        return math.inf
    return rho / (1 - rho) * (arrival_scv + service_scv) / 2 * mean_service


def erlang_b(offered_load_erlangs: float, servers: int) -> float:
    """Erlang B blocking probability by the stable recursion B(0) = 1,
    B(k) = a B(k-1) / (k + a B(k-1)) (Erlang 1917; Kleinrock 1975, sec. 3.7)."""
    if offered_load_erlangs < 0:
        raise ValueError(f"offered load must be >= 0, got {offered_load_erlangs}")
    if servers < 0:
        raise ValueError(f"servers must be >= 0, got {servers}")
    a = offered_load_erlangs
    b = 1.0
    for k in range(1, servers + 1):
        b = a * b / (k + a * b)
    return b


def erlang_c(offered_load_erlangs: float, servers: int) -> float:
    """Probability that an arrival waits in an M/M/c queue (Erlang C).

    Computed stably from Erlang B: C = c B / (c - a (1 - B)) (Kleinrock 1975, sec. 3.5).
    a = 10 Erlang, c = 14 gives 0.1741319. Returns 1.0 when a >= c (every arrival waits).
    Raises ``ValueError`` for c < 1 or a < 0.
    """
    if servers < 1:
        raise ValueError(f"servers must be >= 1, got {servers}")
    a = offered_load_erlangs
    if saturated(a / servers):
        return 1.0
    b = erlang_b(a, servers)
    return servers * b / (servers - a * (1 - b))


def mmc_wait_seconds(arrival_rate: float, service_rate_per_server: float, servers: int) -> float:
    """M/M/c mean wait in queue: Wq = C(c, a) / (c mu - lambda), a = lambda / mu.

    Arrival 0.2, mu 0.1, c = 3: P(wait) = 4/9, Wq = 4.4444; c = 4: Wq = 0.869565 (time unit of
    the rates). Returns ``inf`` when lambda >= c mu.
    """
    a = _rates(arrival_rate, service_rate_per_server)
    if servers < 1:
        raise ValueError(f"servers must be >= 1, got {servers}")
    if saturated(a / servers):
        return math.inf
    return erlang_c(a, servers) / (servers * service_rate_per_server - arrival_rate)


def step_time_scv(step: StepTime) -> float:
    """Squared coefficient of variation of a step-time distribution: constant 0, exponential 1,
    lognormal exp(sigma^2) - 1 (the lognormal's variance over its squared mean)."""
    if step.distribution == "constant":
        return 0.0
    if step.distribution == "exponential":
        return 1.0
    return math.expm1(step.sigma**2)
