"""The model provider behind the gateway (simulator.engine.provider): the gateway meters calls to
the per-second rate-limit buckets and queues them for a concurrency slot; hang windows."""

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


def test_a_wave_above_one_seconds_allowance_waits_at_the_gateway_for_the_bucket() -> None:
    """RPM 600 is 10 requests a second: of 15 calls at one instant 10 leave at once and the
    other 5 wait at the gateway, one every 0.1 s (nothing refused, though 15 is far below 600 a
    minute: the provider would have answered them 429)."""
    p = provider(rpm=600, tpm=10_000_000_000, max_concurrency=1000)
    finishes = [p.admit(0.0, 2.0) for _ in range(15)]
    assert finishes[:10] == [2.0] * 10
    assert finishes[10:] == pytest.approx([2.1, 2.2, 2.3, 2.4, 2.5])
    assert (p.rejected_429, p.gateway_wait_s) == (0, pytest.approx(1.5))


def test_the_token_bucket_refills_continuously() -> None:
    """TPM 2,500,000 at 1,800 tokens a call: 23 calls at once (41,667 tokens a second, 0.15 of a
    call left over), the 24th once the bucket holds a call again (0.85 x 0.0432 s = 0.037 s
    later), then one call per 1,800 / 41,667 = 0.0432 s."""
    p = provider(rpm=1_000_000, tpm=2_500_000, max_concurrency=1000)
    finishes = [p.admit(0.0, 2.0) for _ in range(24)]
    assert finishes[:23] == [2.0] * 23
    assert finishes[23] == pytest.approx(2.0 + 0.85 * 1800 / (2_500_000 / 60), abs=1e-3)
    assert p.admit(0.0, 2.0) == pytest.approx(finishes[23] + 1800 / (2_500_000 / 60))
    assert p.admit(10.0, 2.0) == 12.0


def test_a_call_larger_than_a_second_but_within_the_minute_leaves_when_it_fits() -> None:
    """TPM 60,000 holds 1,000 tokens a second, less than one call: one call goes through, and
    the next leaves the gateway 1,800 / 1,000 = 1.8 s later."""
    p = provider(rpm=1000, tpm=60_000, max_concurrency=10)
    assert p.admit(0.0, 1.0) == 1.0
    assert p.admit(1.7, 1.0) == pytest.approx(2.8)
    assert p.gateway_wait_s == pytest.approx(0.1)


def test_a_call_larger_than_the_minute_is_refused_every_time() -> None:
    """A call of 1,800 tokens on a TPM of 1,000 can never be sent: HTTP 429, the only one left."""
    p = provider(rpm=1000, tpm=1000, max_concurrency=10)
    assert [p.admit(t, 1.0) for t in (0.0, 60.0, 3600.0)] == [REJECT_429] * 3


def test_the_rpm_limit_caps_model_calls_without_a_429() -> None:
    """RPM 120 = 2 calls/s against 5 offered: 2 calls at once, then exactly 2 calls/s, the rest
    waiting at the gateway (the backlog grows; nothing is refused). A call is counted when the
    gateway takes it, so the 16 partitions' calls queued at the end count too."""
    d = make_design(
        event_log={"partitions": 16},
        consumers={"agent": {"instances": 4, "concurrency_per_instance": 4}},
        model={"primary": {"rpm": 120, "tpm": 10_000_000, "max_concurrency": 100}},
    )
    m = run(d, Workload.from_arrays(600.0, agent=even(5, 600, 0.5)))
    assert m.http_429s == 0
    assert 0.99 * 2 * 600 <= m.model_calls <= 2 + 2 * 600 + 16
    assert m.by_group["agent"].capacity_eps == pytest.approx(2.0)
    # Little's law at the gateway: about 15 of the 16 partitions' calls queue at 2 calls/s.
    assert m.model_wait_mean_s == pytest.approx(7.5, rel=0.05)


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


def test_model_wait_is_the_gateway_queue_for_slots_and_for_the_buckets() -> None:
    """Four partitions call at 1 s. With 2 slots and 5 s calls two wait 5 s at the gateway: a
    mean wait of 2.5 s. With one request a second (RPM 60) the bucket holds one call: the calls
    leave at 1, 2, 3 and 4 s, waits (0 + 1 + 2 + 3) / 4 = 1.5 s, and no 429."""
    arrivals = Workload.from_arrays(60.0, agent=([1.0] * 4, [5.0] * 4))
    four = {"event_log": {"partitions": 4}, "consumers": {"agent": {"instances": 1}}}
    slots = design(**four, model={"primary": {"max_concurrency": 2}})
    assert run_arrays(slots, arrivals)[1].metrics.model_wait_mean_s == pytest.approx(2.5)
    rpm = design(**four, model={"primary": {"rpm": 60}})
    m = run_arrays(rpm, arrivals)[1].metrics
    assert (m.http_429s, m.model_wait_mean_s) == (0, pytest.approx(1.5))


# ----------------------------------------------------------------------------- hang windows


def test_a_call_in_a_hang_window_gets_its_error_when_the_window_ends() -> None:
    p = provider(rpm=1000, tpm=10_000_000, max_concurrency=10)
    p.add_hang(300.0, 320.0)
    assert [p.error_delay(t) for t in (299.0, 300.0, 312.5, 320.0)] == [0.0, 20.0, 7.5, 0.0]
