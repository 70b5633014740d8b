"""A model provider's tokens a minute, its ceilings on calls a second and the gateway's wait."""

from __future__ import annotations

import math

import pytest

from simulator.closed_forms.provider import gateway_wait, provider_capacity_eps, tokens_per_minute
from simulator.closed_forms.queueing import erlang_c, mmc_wait_seconds
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


def test_the_gateway_wait_is_the_mmc_queue_on_the_providers_slots() -> None:
    p_wait, wait = gateway_wait(10, 2.0, 24, callers=96)
    assert p_wait == pytest.approx(erlang_c(20, 24))
    assert wait == pytest.approx(mmc_wait_seconds(10, 0.5, 24))


def test_nobody_waits_when_the_callers_cannot_fill_the_slots() -> None:
    assert gateway_wait(10, 2.0, 24, callers=24) == (0.0, 0.0)
    assert gateway_wait(0, 2.0, 24, callers=96) == (0.0, 0.0)


def test_the_gateway_wait_has_no_end_when_the_calls_need_every_slot() -> None:
    assert gateway_wait(10, 2.0, 20, callers=96) == (1.0, None)


def test_a_relay_wave_waits_for_the_bucket_beyond_its_room() -> None:
    """A 5 s relay at 10 calls/s publishes waves of 50 calls on about 39 of 96 partitions into a
    TPM bucket of 23.1 calls: the docstring's 0.138 s with a run's peakedness 4, 0.124 s for
    Poisson calls (less spread in the waves: the wait is convex in the wave's size)."""
    from simulator.closed_forms.provider import relay_wave_wait

    tpm_calls = 2_500_000 / 60 / 1800
    assert relay_wave_wait(10, 5, 96, tpm_calls, tpm_calls, 4.0) == pytest.approx(0.1378, abs=1e-3)
    assert relay_wave_wait(10, 5, 96, tpm_calls, tpm_calls, 1.0) == pytest.approx(0.1235, abs=1e-3)
    # One wave with a fixed size (peakedness near 0): exactly m (m + 1) / (2 r) over N calls.
    distinct = 96 * (1 - (1 - 1 / 96) ** 50)
    m = distinct - tpm_calls
    exact = m * (m + 1) / (2 * tpm_calls) / 50
    assert relay_wave_wait(10, 5, 96, tpm_calls, tpm_calls, 1e-4) == pytest.approx(exact, rel=0.01)
    # The course's 200 ms relay publishes two calls a wave: they fit.
    assert relay_wave_wait(10, 0.2, 96, tpm_calls, tpm_calls, 4.0) == 0.0
    # No relay, no waves (the deterministic mode's constant delay has peakedness 0).
    assert relay_wave_wait(10, 0.0, 96, tpm_calls, tpm_calls, 4.0) == 0.0
    assert relay_wave_wait(10, 5, 96, tpm_calls, tpm_calls, 0.0) == 0.0
    # Fewer partitions than the bucket holds: a wave always fits.
    assert relay_wave_wait(10, 5, 20, tpm_calls, tpm_calls, 4.0) == 0.0
