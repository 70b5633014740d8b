"""A model provider's tokens a minute and its ceilings on calls a second."""

from __future__ import annotations

import math

from simulator.closed_forms.provider import provider_capacity_eps, tokens_per_minute
from simulator.design import ModelProvider


def test_tokens_per_minute_course_peak() -> None:
    assert tokens_per_minute(10, 1500, 300) == 1_080_000


def test_provider_ceilings_by_limit() -> None:
    provider = ModelProvider(rpm=900, tpm=1_500_000, max_concurrency=32)
    limits = provider_capacity_eps(provider, 2.0, 1800)
    assert limits["concurrency"] == 16
    assert limits["rpm"] == 15
    assert limits["tpm"] == 1_500_000 / 60 / 1800


def test_no_ceiling_without_tokens_or_call_time() -> None:
    provider = ModelProvider(rpm=900, tpm=1_500_000, max_concurrency=32)
    limits = provider_capacity_eps(provider, 0.0, 0)
    assert limits["tpm"] == math.inf
    assert limits["concurrency"] == math.inf
