"""The model provider behind the gateway (simulator.engine.provider): per-second rate-limit
buckets, the gateway's queue for a concurrency slot, and hang windows."""

from __future__ import annotations

import pytest

from simulator.engine import Workload
from simulator.engine.provider import REJECT_429, Provider, burst_capacity
from tests.simulator.faults.builders import design, run_arrays
from tests.simulator.test_consumers import even, make_design, run


def provider(rpm: int, tpm: int, max_concurrency: int, tokens: int = 1800) -> Provider:
    spec = make_design(
        model={"primary": {"rpm": rpm, "tpm": tpm, "max_concurrency": max_concurrency}}
    ).model.primary
    return Provider(spec, tokens)


# ----------------------------------------------------------------------------- rate limits


@pytest.mark.parametrize(
    ("limit", "cost", "capacity"),
    [
        (1500, 1, 25.0),
        (2_500_000, 1800, 2_500_000 / 60),
        (60_000, 1800, 1800.0),
        (1000, 1800, 1000 / 60),
    ],
)
def test_a_bucket_holds_one_seconds_allowance_or_one_call_the_minute_allows(
    limit: int, cost: int, capacity: float
) -> None:
    assert burst_capacity(limit, cost) == pytest.approx(capacity)


def test_a_wave_above_one_seconds_allowance_is_refused_though_the_minute_has_room() -> None:
    """RPM 600 is 10 requests a second: of 15 calls at one instant 10 go through and 5 get a
    429, though 15 is far below 600 a minute; a second later the bucket holds 10 again."""
    p = provider(rpm=600, tpm=10_000_000_000, max_concurrency=1000)
    answers = [p.admit(0.0, 2.0) for _ in range(15)]
    assert answers.count(REJECT_429) == 5
    assert [p.admit(1.01, 2.0) for _ in range(11)].count(REJECT_429) == 1


def test_the_token_bucket_refills_continuously() -> None:
    """TPM 2,500,000 at 1,800 tokens a call: 23 calls at once (41,667 tokens a second, 0.15 of a
    call left over), the next once the bucket holds a call again (0.85 x 0.0432 s = 0.037 s
    later), then one call per 1,800 / 41,667 = 0.0432 s."""
    p = provider(rpm=1_000_000, tpm=2_500_000, max_concurrency=1000)
    assert [p.admit(0.0, 2.0) for _ in range(24)].count(REJECT_429) == 1
    assert p.admit(0.03, 2.0) == REJECT_429
    assert p.admit(0.04, 2.0) == pytest.approx(2.04)
    assert p.admit(0.06, 2.0) == REJECT_429
    assert p.admit(0.085, 2.0) == pytest.approx(2.085)


def test_a_call_larger_than_a_second_but_within_the_minute_is_admitted() -> None:
    """TPM 60,000 holds 1,000 tokens a second, less than one call: one call goes through, and
    the next after 1,800 / 1,000 = 1.8 s."""
    p = provider(rpm=1000, tpm=60_000, max_concurrency=10)
    assert p.admit(0.0, 1.0) == 1.0
    assert p.admit(1.7, 1.0) == REJECT_429
    assert p.admit(1.8, 1.0) == pytest.approx(2.8)


def test_a_call_larger_than_the_minute_is_never_admitted() -> None:
    p = provider(rpm=1000, tpm=1000, max_concurrency=10)
    assert [p.admit(t, 1.0) for t in (0.0, 60.0, 3600.0)] == [REJECT_429] * 3


def test_rpm_limit_caps_model_calls_with_429s() -> None:
    """RPM 120 = 2 calls/s against 5 offered: 2 calls at once, then 2 calls/s and 429s (short
    backoffs keep the bucket busy)."""
    d = make_design(
        event_log={"partitions": 16},
        consumers={"agent": {"instances": 4, "concurrency_per_instance": 4}},
        model={
            "primary": {"rpm": 120, "tpm": 10_000_000, "max_concurrency": 100},
            "retry": {"max_attempts": None, "base_backoff_seconds": 0.1, "max_backoff_seconds": 1},
        },
    )
    m = run(d, Workload.from_arrays(600.0, agent=even(5, 600, 0.5)))
    assert m.http_429s > 0
    assert m.model_calls <= 2 + 2 * 600 + 1
    assert m.model_calls >= 0.95 * (2 * 600)
    assert m.by_group["agent"].capacity_eps == pytest.approx(2.0)


# ----------------------------------------------------------------------------- the gateway


def test_the_gateway_queues_a_call_for_the_first_free_slot() -> None:
    """max_concurrency 2 with 5 s calls: the third and fourth calls wait at the gateway for the
    slots freed at 5 s and 6 s (3 s each), not refused."""
    p = provider(rpm=1000, tpm=10_000_000, max_concurrency=2)
    assert p.admit(0.0, 5.0) == 5.0
    assert p.admit(1.0, 5.0) == 6.0
    assert p.admit(2.0, 5.0) == 10.0
    assert p.admit(3.0, 5.0) == 11.0
    assert p.admit(10.0, 5.0) == 15.0
    assert (p.admitted, p.gateway_wait_s, p.rejected_429) == (5, 6.0, 0)


def test_provider_concurrency_limit_queues_calls_instead_of_refusing_them() -> None:
    """max_concurrency 2 with 1 s calls: at most 2 calls/s whatever the partitions; the excess
    waits at the gateway (no 429) and the wait is counted in model_wait_mean_s."""
    d = make_design(
        event_log={"partitions": 16},
        consumers={"agent": {"instances": 4, "concurrency_per_instance": 4}},
        model={"primary": {"rpm": 1_000_000, "tpm": 10_000_000_000, "max_concurrency": 2}},
    )
    m = run(d, Workload.from_arrays(600.0, agent=even(4, 600, 1.0)))
    assert m.throughput_eps == pytest.approx(2.0, rel=0.01)
    assert m.http_429s == 0
    assert m.model_wait_mean_s > 1.0


def test_model_wait_is_the_gateway_queue_plus_the_backoff_after_429s() -> None:
    """Four partitions call at 1 s. With 2 slots and 5 s calls two wait 5 s at the gateway: a
    mean wait of 2.5 s. With one request a second (RPM 60) and no jitter, the calls go through
    at 1 s, 2 s (after 1 s of backoff), 4 s (1 + 2) and 8 s (1 + 2 + 4): (0+1+3+7)/4 = 2.75 s."""
    arrivals = Workload.from_arrays(60.0, agent=([1.0] * 4, [5.0] * 4))
    four = {"event_log": {"partitions": 4}, "consumers": {"agent": {"instances": 1}}}
    slots = design(**four, model={"primary": {"max_concurrency": 2}})
    assert run_arrays(slots, arrivals)[1].metrics.model_wait_mean_s == pytest.approx(2.5)
    rpm = design(
        **four,
        model={
            "primary": {"rpm": 60},
            "retry": {"base_backoff_seconds": 1, "max_backoff_seconds": 16, "jitter": "none"},
        },
    )
    m = run_arrays(rpm, arrivals)[1].metrics
    assert (m.http_429s, m.model_wait_mean_s) == (6, pytest.approx(2.75))


# ----------------------------------------------------------------------------- hang windows


def test_a_call_in_a_hang_window_gets_its_error_when_the_window_ends() -> None:
    p = provider(rpm=1000, tpm=10_000_000, max_concurrency=10)
    p.add_hang(300.0, 320.0)
    assert [p.error_delay(t) for t in (299.0, 300.0, 312.5, 320.0)] == [0.0, 20.0, 7.5, 0.0]
