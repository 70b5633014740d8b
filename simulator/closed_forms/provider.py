"""A model provider's load and ceilings: tokens a minute, and calls a second by limit."""

from __future__ import annotations

import math

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
