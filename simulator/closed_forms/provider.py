"""A model provider's load and ceilings: tokens a minute, calls a second by limit, and the wait
at the model gateway: for a concurrency slot, and for room in the RPM and TPM buckets."""

from __future__ import annotations

import math

from simulator.closed_forms.queueing import erlang_c, mmc_wait_seconds
from simulator.design import ModelProvider


def tokens_per_minute(
    model_calls_per_second: float, input_per_call: int, output_per_call: int
) -> float:
    """Tokens a minute at a call rate: calls/s x (input + output tokens) x 60.

    10 calls/s x (1,500 + 300) x 60 = 1,080,000 tokens a minute.
    """
    return model_calls_per_second * (input_per_call + output_per_call) * 60.0


def provider_capacity_eps(
    provider: ModelProvider, call_seconds: float, tokens_per_call: int
) -> dict[str, float]:
    """A provider's ceilings on model calls per second, by limit.

    ``concurrency``: max_concurrency / call time (Little; no ceiling when a call takes no time);
    ``rpm``: rpm / 60; ``tpm``: tpm / 60 / tokens per call (no ceiling when a call has no tokens).
    """
    limits = {
        "concurrency": (provider.max_concurrency / call_seconds if call_seconds > 0 else math.inf),
        "rpm": provider.rpm / 60.0,
    }
    limits["tpm"] = provider.tpm / 60.0 / tokens_per_call if tokens_per_call > 0 else math.inf
    return limits


def gateway_wait(
    calls_per_second: float,
    call_seconds: float,
    max_concurrency: int,
    callers: int,
    arrival_scv: float = 1.0,
    service_scv: float = 1.0,
) -> tuple[float, float | None]:
    """The probability that a model call waits at the gateway for a concurrency slot, and its
    mean wait in seconds (``None`` when the calls need every slot or more).

    The gateway holds at most ``max_concurrency`` calls in flight and queues the rest first come
    first served: an M/M/c queue with ``c = max_concurrency`` (Erlang C; the M/M/c mean wait,
    Kleinrock 1975, sec. 3.5), scaled by the Allen-Cunneen factor ``(c_a^2 + c_s^2) / 2`` for
    arrivals and call times of squared coefficients of variation ``arrival_scv`` and
    ``service_scv`` (Allen, *Probability, Statistics, and Queueing Theory*, 1990, sec. 6.2;
    both 1: exactly Erlang C's M/M/c). ``callers``: the most calls that can be in flight at once
    (the agent group's busy partitions); when it is at most ``max_concurrency`` nobody ever waits
    (0, 0). 10 calls/s of 2 s on 24 slots from 96 partitions: (0.298, 0.149); with a run's
    burstiness ``c_a^2 = 4`` and lognormal calls ``c_s^2 = 0.284``: 0.149 x 2.142 = 0.319 s.
    """
    if calls_per_second <= 0 or callers <= max_concurrency:
        return 0.0, 0.0
    offered = calls_per_second * call_seconds
    wait = mmc_wait_seconds(calls_per_second, 1.0 / call_seconds, max_concurrency)
    if math.isinf(wait):
        return erlang_c(offered, max_concurrency), None
    return erlang_c(offered, max_concurrency), wait * (arrival_scv + service_scv) / 2.0


def bucket_wait(
    calls_per_second: float, rate_per_second: float, burst_calls: float, arrival_scv: float
) -> float | None:
    """Mean seconds a call waits at the gateway for room in a rate limit's token bucket that
    refills ``rate_per_second`` calls a second and holds ``burst_calls`` (one second's
    allowance); ``None`` when the calls need the whole rate or more.

    A bucket of depth ``b`` in front of a server of rate ``mu`` delays a call by what a queue
    served at ``mu`` holds beyond ``b`` (the (sigma, rho) regulator: Cruz, "A Calculus for
    Network Delay", 1991). The queue's work seen by an arrival is taken as exponential with the
    Allen-Cunneen G/D/1 mean, ``L = rho^2 c_a^2 / (2 (1 - rho))`` calls (``rho = lambda / mu``,
    deterministic service of ``1 / mu``), and a tail weight ``rho``: ``P(V > x) = rho e^(-x /
    theta)``, ``theta = L / rho``; the wait is ``E[max(0, V - b)] / mu = theta rho e^(-b /
    theta) / mu``. An approximation: exact neither for bursts nor for the bucket's refill."""
    if calls_per_second <= 0:
        return 0.0
    if rate_per_second <= 0:
        return None
    rho = calls_per_second / rate_per_second
    if rho >= 1.0:
        return None
    queue = rho * rho * arrival_scv / (2.0 * (1.0 - rho))
    if queue <= 0:
        return 0.0
    theta = queue / rho
    return theta * rho * math.exp(-burst_calls / theta) / rate_per_second


def burst_capacity(per_minute_limit: float, cost: float) -> float:
    """A bucket's capacity for a per-minute limit enforced per second: one second's allowance
    (``per_minute_limit / 60``), but at least one call's ``cost`` when the minute's limit holds
    it, so that such a call can be admitted at all (1,800 tokens on a 60,000 TPM limit, whose
    second holds 1,000); a call costing more than the minute's limit never fits. Same unit as
    ``cost`` (requests or tokens). ``burst_capacity(1500, 1)`` is 25 requests."""
    second = per_minute_limit / 60.0
    if cost > per_minute_limit:
        return second
    return max(second, cost)


WAVE_POINTS = 2001
"""Points of the quadrature over a wave's size in :func:`relay_wave_wait`."""


def relay_wave_wait(
    calls_per_second: float,
    interval_s: float,
    callers: int,
    rate_per_second: float,
    burst_calls: float,
    peakedness: float = 1.0,
) -> float:
    """Mean seconds a model call waits at the gateway for a rate limit's bucket when an outbox
    relay polling every ``interval_s`` publishes the calls written meanwhile together (a wave).

    A wave holds ``X`` calls, mean ``N = calls_per_second x interval_s``, its variance
    ``peakedness x N`` (a compound Poisson count: a causal run's researchers call together,
    :func:`simulator.estimate.runs.peakedness`; 1 for Poisson calls), taken as a gamma
    distribution of that mean and variance. Calls on one partition run one after another, so the
    wave reaches the gateway as the ``D = P (1 - (1 - 1/P)^X)`` distinct partitions among the
    ``P = callers`` the calls can be on (balls into bins). The bucket has refilled between waves
    (``rate x interval >= burst``) and admits ``burst_calls`` at once; the ``j``-th call beyond
    it waits ``j / rate``: ``m (m + 1) / (2 rate)`` for ``m = max(0, D - burst)``. The mean over
    the waves (a quadrature over ``X``) divided by ``N``. 10 calls/s, a 5 s relay, 96
    partitions, a 2.5 M TPM bucket of 1,800-token calls (23.1 calls a second), peakedness 4:
    0.138 s (the simulation: 0.123-0.158 s, seeds 1-3). 0 when a wave fits the bucket, with no
    wave (``interval_s`` or ``peakedness`` 0, the deterministic mode's constant delay), or when
    the bucket does not refill between waves (then :func:`bucket_wait`'s queue is the figure).
    """
    mean = calls_per_second * interval_s
    if mean <= 0 or peakedness <= 0 or callers <= burst_calls or rate_per_second <= 0:
        return 0.0
    if rate_per_second * interval_s < burst_calls:
        return 0.0
    p = float(callers)
    # The wave size at which D reaches the bucket: P (1 - (1 - 1/P)^x) = burst.
    start = math.log1p(-burst_calls / p) / math.log1p(-1.0 / p) if p > 1 else 0.0
    shape = mean / peakedness
    scale = peakedness
    end = mean + 12.0 * math.sqrt(peakedness * mean) + 12.0 * scale
    if start >= end:
        return 0.0
    import numpy as np  # only here: lint and the live estimate's other figures need no numpy

    x = np.linspace(max(start, 1e-12), end, WAVE_POINTS)
    log_norm = math.lgamma(shape) + shape * math.log(scale)
    log_density = (shape - 1.0) * np.log(x) - x / scale - log_norm
    distinct = p * -np.expm1(x * math.log1p(-1.0 / p)) if p > 1 else np.minimum(x, 1.0)
    excess = np.maximum(0.0, distinct - burst_calls)
    per_wave = excess * (excess + 1.0) / (2.0 * rate_per_second)
    y = np.exp(log_density) * per_wave
    total = float(((y[1:] + y[:-1]) * np.diff(x)).sum() / 2.0)  # the trapezoid rule
    return total / mean
