"""A model provider's load and ceilings: tokens a minute, calls a second by limit, and the wait
for a concurrency slot at the model gateway."""

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
    calls_per_second: float, call_seconds: float, max_concurrency: int, callers: int
) -> tuple[float, float | None]:
    """The probability that a model call waits at the gateway for a concurrency slot, and its
    mean wait in seconds (``None`` when the calls need every slot or more).

    The gateway holds at most ``max_concurrency`` calls in flight and queues the rest first come
    first served: an M/M/c queue with ``c = max_concurrency`` (Erlang C; the M/M/c mean wait,
    Kleinrock 1975, sec. 3.5). ``callers``: the most calls that can be in flight at once (the
    agent group's busy partitions); when it is at most ``max_concurrency`` nobody ever waits
    (0, 0). 10 calls/s of 2 s on 24 slots from 96 partitions: (0.298, 0.149).
    """
    if calls_per_second <= 0 or callers <= max_concurrency:
        return 0.0, 0.0
    offered = calls_per_second * call_seconds
    wait = mmc_wait_seconds(calls_per_second, 1.0 / call_seconds, max_concurrency)
    return erlang_c(offered, max_concurrency), None if math.isinf(wait) else wait
