"""Model provider outage (issue item 5): backlog and drain without a fallback, synchronized
retries metered at the gateway, a circuit breaker with a fallback at its own capacity and model
version, and the response cache keyed with or without the model version."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from simulator import simulate
from simulator.engine import Workload
from simulator.result import SimulationResult
from tests.simulator.faults.builders import (
    UNLIMITED_MODEL,
    course_scenario,
    design,
    known_bad,
    reference,
    run_arrays,
    single_stage,
)

WORKED = {
    "event_log": {"partitions": 48},
    "consumers": {
        "agent": {"instances": 4, "concurrency_per_instance": 12, "max_poll_records": 48}
    },
}
"""The worked sizing example: 48 partitions on 4 x 12, so 24 events/s at 2 s a step."""


def outage(model: dict[str, Any], duration: float = 180.0, **extra: Any) -> SimulationResult:
    """20 step events/s of 2 s (deterministic); the primary fails from 300 s for ``duration``."""
    d = design(**WORKED, model=model, **extra)
    fault = {"kind": "provider_outage", "at_seconds": 300, "duration_seconds": duration}
    return simulate(d, single_stage(20, 1800, 2.0, [fault]), 1)


FAST_RETRY = {"max_attempts": 2, "base_backoff_seconds": 0.5, "max_backoff_seconds": 0.5}


def test_without_a_fallback_the_backlog_builds_then_drains() -> None:
    """Like a consumer outage: 20/s x 180 s = 3,600 events wait, drained at 24 - 20 = 4/s in
    900 s. Calls to a provider that is down are retried (not dead-lettered, even with two
    attempts allowed)."""
    m = outage({"retry": FAST_RETRY}).metrics
    assert m.backlog_peak == pytest.approx(3600, rel=0.03)
    assert m.drain_seconds == pytest.approx(900, rel=0.03)
    assert (m.lost, m.dead_lettered, m.fallback_calls) == (0, 0, 0)


def test_a_synchronized_wave_of_retries_waits_at_the_gateway_instead_of_drawing_429s() -> None:
    """Ten partitions each get an event at 10 s while the provider is down (until 30 s); it then
    allows two requests a second (RPM 120, enforced per second). Without jitter all ten retry at
    the same instant after the outage (10 + 1, 3, 7, 15 s, then every 16 s: at 41 s); the
    gateway, which knows the limit, sends two at once and the rest one every 0.5 s: no 429, the
    last call leaves at 45 s. With full jitter the retries spread out; none is refused either."""
    results = {}
    for jitter in ("none", "full"):
        d = design(
            event_log={"partitions": 10},
            consumers={"agent": {"instances": 1, "concurrency_per_instance": 10}},
            model={
                "primary": {**UNLIMITED_MODEL, "rpm": 120},
                "retry": {
                    "max_attempts": None,
                    "base_backoff_seconds": 1,
                    "max_backoff_seconds": 16,
                    "jitter": jitter,
                },
            },
        )
        workload = Workload.from_arrays(150.0, agent=([10.0] * 10, [5.0] * 10))
        fault = {
            "kind": "provider_outage",
            "at_seconds": 0,
            "duration_seconds": 30,
            "failure_seconds": 0,
        }
        results[jitter] = run_arrays(d, workload, [fault])[1].metrics
    none, full = results["none"], results["full"]
    assert (none.http_429s, full.http_429s) == (0, 0)
    # Waits at the gateway after 41 s: 0, 0, 0.5, 1.0, ..., 4.0 s, a mean of 1.8 s (the
    # backoffs of the outage are not a wait for the provider's limits).
    assert none.model_wait_mean_s == pytest.approx(sum(0.5 * k for k in range(9)) / 10)
    assert none.processed == full.processed == 10


def test_a_breaker_and_a_fallback_sized_for_the_load_keep_runs_moving() -> None:
    model = {
        "fallback": {"enabled": True, **UNLIMITED_MODEL, "max_concurrency": 48},
        "circuit_breaker": {"enabled": True, "failure_threshold": 5, "open_seconds": 30},
    }
    m = outage(model, duration=600).metrics
    assert m.fallback_calls == pytest.approx(20 * 600, rel=0.02)
    assert m.backlog_peak < 100
    assert m.drain_seconds is not None and m.drain_seconds < 60
    assert (m.lost, m.dead_lettered) == (0, 0)


def test_a_smaller_fallback_carries_the_runs_at_its_own_capacity() -> None:
    """A fallback allowing 20 calls at once runs 20 / 2 s = 10 events/s while 20 arrive: the
    throughput during the outage is the fallback's, and the other 10/s wait."""
    model = {
        "fallback": {"enabled": True, **UNLIMITED_MODEL, "max_concurrency": 20},
        "circuit_breaker": {"enabled": True},
    }
    result = outage(model, duration=600, failures={"retry": {"max_attempts": None}})
    ts = result.timeseries
    during = [x for t, x in zip(ts.t_s, ts.throughput_eps, strict=True) if 360 < t <= 900]
    # Never above the fallback's 10/s; a little below it while 429s from the fallback make
    # partitions back off.
    assert 0.9 * 10.0 <= np.mean(during) <= 1.02 * 10.0
    assert 0.9 * 10 * 600 <= result.metrics.fallback_calls <= 1.02 * 10 * 600
    assert result.metrics.backlog_peak == pytest.approx(10 * 600, rel=0.1)


def test_a_breaker_without_a_fallback_fails_fast_and_closes_after_a_trial() -> None:
    """While open, calls fail at once (no second waiting for the primary's error); the first trial
    after the provider is back closes it, at most open_seconds after recovery."""
    model = {"circuit_breaker": {"enabled": True, "open_seconds": 30}, "retry": FAST_RETRY}
    broken = outage(model).metrics
    plain = outage({"retry": FAST_RETRY}).metrics
    assert broken.fallback_calls == 0
    assert broken.backlog_peak == pytest.approx(plain.backlog_peak, rel=0.05)
    assert broken.drain_seconds is not None and plain.drain_seconds is not None
    assert abs(broken.drain_seconds - plain.drain_seconds) <= 30


def cache_run(key: str, faults: list[dict[str, Any]]) -> SimulationResult:
    """No dedupe, a response cache, a breaker and a fallback allowing 30 calls at once; batches of
    up to 10 records, so a crash finds completed records after the committed offset."""
    d = design(
        event_log={"partitions": 48},
        delivery={"dedupe": "none"},
        consumers={
            "agent": {"instances": 4, "concurrency_per_instance": 12, "max_poll_records": 120}
        },
        model={
            "fallback": {"enabled": True, **UNLIMITED_MODEL, "max_concurrency": 30},
            "circuit_breaker": {"enabled": True, "failure_threshold": 5, "open_seconds": 30},
            "cache": {"enabled": True, "key": key},
        },
    )
    return simulate(d, single_stage(20, 1200, 2.0, faults), 1)


CRASH = {"kind": "worker_crash", "at_seconds": 390, "duration_seconds": 60, "instances": "all"}
BACKLOG = {"kind": "worker_crash", "at_seconds": 100, "duration_seconds": 60, "instances": "all"}
"""A first crash leaves a backlog, so the second (at 200 s) finds multi-record batches."""
SECOND = {"kind": "worker_crash", "at_seconds": 200, "duration_seconds": 30, "instances": "all"}
OUTAGE = {"kind": "provider_outage", "at_seconds": 100, "duration_seconds": 300}


def test_a_cache_by_prompt_and_model_version_answers_a_replay_without_paying_twice() -> None:
    m = cache_run("prompt_hash_and_model_version", [BACKLOG, SECOND]).metrics
    assert m.duplicate_effects > 0  # no dedupe: the replayed records apply again...
    # ...but their model calls are answered, and so are the calls the crashes cut off (at most
    # one per partition per crash), whose answers reached the cache after the workers died.
    abandoned = m.cache_hits - m.duplicate_effects
    assert 0 < abandoned <= 2 * 48
    assert m.model_calls_repeated == 0
    assert m.wrong_model_version_served == 0


def test_a_replay_across_a_switch_of_provider() -> None:
    """Records answered by the fallback before the crash at 390 s are replayed at 450 s, after the
    primary is back: keyed by model version the cache misses and the primary is paid; keyed by
    prompt alone the fallback's answers are served as the primary's."""
    versioned = cache_run("prompt_hash_and_model_version", [OUTAGE, CRASH]).metrics
    prompt_only = cache_run("prompt_hash", [OUTAGE, CRASH]).metrics
    assert versioned.fallback_calls == prompt_only.fallback_calls > 0
    replayed = prompt_only.duplicate_effects
    assert replayed > 0
    # The replayed records (and the calls the crash cut off, answered by the fallback too) are
    # the fallback's answers: keyed by version they miss, keyed by prompt they are served.
    assert versioned.wrong_model_version_served == 0
    assert prompt_only.wrong_model_version_served >= replayed
    missed = prompt_only.cache_hits - versioned.cache_hits
    assert missed >= replayed
    assert versioned.model_calls_repeated == prompt_only.model_calls_repeated + missed
    assert versioned.tokens_repeated > prompt_only.tokens_repeated


def test_course_provider_outage() -> None:
    """The reference's breaker and fallback keep the peak moving and drain within two minutes;
    without a fallback every run waits out the ten minutes: runs requested during the outage do
    not finish before it ends, and the backlog is not drained by the window's end."""
    s = course_scenario("provider-outage")
    [fault] = [f for f in s.faults if f.kind == "provider_outage"]
    calls = 0.5 * 20 * fault.duration_seconds  # model calls arriving during the outage
    ref = simulate(reference(), s)
    m = ref.metrics
    assert m.fallback_calls > 0.9 * calls
    assert m.drain_seconds is not None and m.drain_seconds <= 120
    assert (m.lost, m.wrong_model_version_served) == (0, 0)
    bare = simulate(known_bad("no-fallback"), s).metrics
    assert bare.fallback_calls == 0
    assert bare.drain_seconds is None
    assert (bare.lost, bare.dead_lettered) == (0, 0)
    # Causal runs pause rather than pile their later steps up: the runs show the outage.
    assert m.runs_completed is not None and bare.runs_completed is not None
    assert bare.runs_completed < 0.4 * m.runs_completed
    assert bare.run_latency_p50_s is not None and m.run_latency_p50_s is not None
    assert bare.run_latency_p50_s > 0.3 * fault.duration_seconds > 2 * m.run_latency_p50_s


BREAKER_FALLBACK = {"enabled": True, **UNLIMITED_MODEL, "max_concurrency": 48}


def breaker(threshold: int, open_s: float) -> SimulationResult:
    """The 600 s outage at 20 calls/s with a fallback behind a breaker of the given settings."""
    model = {
        "fallback": BREAKER_FALLBACK,
        "circuit_breaker": {
            "enabled": True,
            "failure_threshold": threshold,
            "open_seconds": open_s,
        },
    }
    return outage(model, duration=600)


def test_the_breaker_threshold_is_the_calls_that_wait_for_the_dead_primary() -> None:
    """Before the breaker opens, ``failure_threshold`` calls each wait for the primary's error;
    afterwards one trial call per ``open_seconds`` (600 s / 30 s = 20) fails. A threshold of 100
    sends 95 more calls to the dead provider than a threshold of 5."""
    low = breaker(5, 30).metrics
    high = breaker(100, 30).metrics
    assert low.primary_failures == pytest.approx(5 + 600 / 30, abs=2)
    assert high.primary_failures - low.primary_failures == 95


def test_a_long_open_time_keeps_paying_the_fallback_after_the_primary_recovered() -> None:
    """Opened at 300 s for 900 s, the breaker sends calls to the fallback until 1200 s, 300 s
    after the primary is back at 900 s: 20 calls/s x 300 s = 6,000 more fallback calls than a
    30 s open time, which returns to the primary within 30 s of its recovery."""
    short = breaker(5, 30).metrics
    long = breaker(5, 900).metrics
    assert short.fallback_calls == pytest.approx(20 * 600, rel=0.06)
    assert long.fallback_calls - short.fallback_calls == pytest.approx(20 * 300, rel=0.1)
    assert long.primary_failures == 5


def test_without_a_breaker_every_outage_call_waits_for_the_primary_error() -> None:
    """No breaker: every call of the outage first waits 1 s for the primary's error, then takes
    its 2 s at the fallback, so 48 partitions carry 48 / 3 s = 16 calls/s of the 20 arriving
    (9,600 in 600 s) and a backlog of about 4/s x 600 s builds; a breaker carries all 20/s."""
    model = {"fallback": BREAKER_FALLBACK, "circuit_breaker": {"enabled": False}}
    m = outage(model, duration=600).metrics
    assert m.primary_failures == m.fallback_calls
    assert m.fallback_calls == pytest.approx(16 * 600, rel=0.03)
    assert m.backlog_peak == pytest.approx(4 * 600, rel=0.1)
    assert breaker(5, 30).metrics.backlog_peak < 100


def abandoned_run(cache: dict[str, Any]) -> SimulationResult:
    """20 step events/s of 2 s on the worked example's 48 partitions, durable dedupe; every agent
    worker dies at 300 s for 60 s with about 20 x 2 = 40 calls in flight."""
    d = design(**WORKED, model={"cache": cache})
    crash = {"kind": "worker_crash", "at_seconds": 300, "duration_seconds": 60, "instances": "all"}
    return simulate(d, single_stage(20, 900, 2.0, [crash]), 1)


def test_the_cache_answers_the_calls_a_crash_abandoned_within_its_ttl() -> None:
    """The provider finishes a call whose worker died, and the gateway's cache stores its answer:
    the redelivery 60 s later finds it (no model call). Without a cache, or with a TTL of 36 s
    (0.01 h) that expires before the redelivery, each of those calls is paid again."""
    cached = abandoned_run({"enabled": True, "ttl_hours": 24}).metrics
    off = abandoned_run({"enabled": False}).metrics
    expired = abandoned_run({"enabled": True, "ttl_hours": 0.01}).metrics
    assert off.model_calls_repeated == pytest.approx(40, abs=8)
    assert (cached.model_calls_repeated, cached.cache_hits) == (0, off.model_calls_repeated)
    assert (expired.model_calls_repeated, expired.cache_hits) == (off.model_calls_repeated, 0)
    assert expired.tokens_repeated == off.tokens_repeated > 0


def test_calls_metered_at_the_gateway_are_paid_once_and_never_repeated() -> None:
    """A provider allowing 15 requests a second (RPM 900) against 20 wanted: the gateway holds
    the excess instead of drawing 429s; only the calls it sent count as model calls and tokens,
    and nothing is repeated. (A poll interval longer than the window keeps members from being
    kicked, which would redeliver, and so repeat, their batches.)"""
    agent = {**WORKED["consumers"]["agent"], "max_poll_interval_ms": 3_600_000}
    d = design(
        event_log=WORKED["event_log"],
        consumers={"agent": agent},
        model={"primary": {**UNLIMITED_MODEL, "rpm": 900}},
    )
    m = simulate(d, single_stage(20, 600, 2.0), 1).metrics
    assert m.http_429s == 0
    assert m.throughput_eps == pytest.approx(15, rel=0.01)
    assert (m.model_calls_repeated, m.tokens_repeated, m.redelivered) == (0, 0, 0)
    finished = m.by_group["agent"].processed
    # Plus the calls in flight or queued at the gateway at the end (48 partitions at most).
    assert finished <= m.model_calls <= finished + 48
    assert m.tokens == m.model_calls * 1800


def test_calls_to_a_hung_provider_all_fail_when_it_comes_back_and_retry_as_one_wave() -> None:
    """Ten partitions call at 5, 6, ..., 14 s while the provider hangs (0-30 s); it resets every
    connection at 30 s, so all ten fail together. Without jitter they retry together at 31 s
    (the first backoff): the gateway sends two at once and one every 0.5 s after (RPM 120), no
    429; the last retry was made 1 s after the provider came back. Full jitter draws each first
    backoff in [0, 1 s]: the last retry comes sooner."""
    results = {}
    for jitter in ("none", "full"):
        d = design(
            event_log={"partitions": 10},
            consumers={"agent": {"instances": 1, "concurrency_per_instance": 10}},
            model={
                "primary": {**UNLIMITED_MODEL, "rpm": 120},
                "retry": {
                    "max_attempts": None,
                    "base_backoff_seconds": 1,
                    "max_backoff_seconds": 16,
                    "jitter": jitter,
                },
            },
        )
        workload = Workload.from_arrays(150.0, agent=([5.0 + i for i in range(10)], [5.0] * 10))
        fault = {
            "kind": "provider_outage",
            "at_seconds": 0,
            "duration_seconds": 30,
            "failure_seconds": 0,
            "hang_until_end": True,
        }
        results[jitter] = run_arrays(d, workload, [fault])[1].metrics
    none, full = results["none"], results["full"]
    assert (none.http_429s, none.model_recovery_s) == (0, 1.0)
    assert full.http_429s == 0
    assert full.model_recovery_s is not None and full.model_recovery_s < 1.0
    assert none.processed == full.processed == 10


def test_without_a_hang_the_same_calls_fail_as_they_are_made_and_retry_apart() -> None:
    """The same ten calls against a provider that fails each at once: their retries keep the
    1 s spacing of the calls, and two requests a second admit them without a 429."""
    d = design(
        event_log={"partitions": 10},
        consumers={"agent": {"instances": 1, "concurrency_per_instance": 10}},
        model={
            "primary": {**UNLIMITED_MODEL, "rpm": 120},
            "retry": {"max_attempts": None, "base_backoff_seconds": 1, "jitter": "none"},
        },
    )
    workload = Workload.from_arrays(150.0, agent=([5.0 + i for i in range(10)], [5.0] * 10))
    fault = {
        "kind": "provider_outage",
        "at_seconds": 0,
        "duration_seconds": 30,
        "failure_seconds": 0,
    }
    m = run_arrays(d, workload, [fault])[1].metrics
    assert (m.http_429s, m.processed) == (0, 10)


def test_a_redelivered_call_that_waits_at_the_gateway_is_one_repeat_paid_once() -> None:
    """Ten partitions call at 1 s (5 s calls); every worker dies at 3 s and comes back at 13 s,
    when the ten abandoned calls are made again, against five requests a second (RPM 300): five
    wait at the gateway. Each abandoned call is one repeated call, paid once (then each
    partition's second event, which arrived at 8 s, is called once)."""
    d = design(
        event_log={"partitions": 10},
        consumers={"agent": {"instances": 1, "concurrency_per_instance": 10}},
        model={
            "primary": {**UNLIMITED_MODEL, "rpm": 300},
            "cache": {"enabled": False},
            "retry": {"max_attempts": None, "base_backoff_seconds": 1, "jitter": "none"},
        },
    )
    workload = Workload.from_arrays(120.0, agent=([1.0] * 10 + [8.0] * 10, [5.0] * 20))
    crash = {
        "kind": "worker_crash",
        "group": "agent",
        "at_seconds": 3,
        "duration_seconds": 10,
        "instances": "all",
    }
    m = run_arrays(d, workload, [crash])[1].metrics
    assert m.http_429s == 0
    assert (m.model_calls_repeated, m.tokens_repeated) == (10, 10 * 1800)
    assert (m.model_calls, m.processed) == (30, 20)
