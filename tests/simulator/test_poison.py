"""Poison messages: worked-numbers item 8 and the retry-policy variants."""

from __future__ import annotations

import pytest

from simulator.design import DeadLetterQueue, FailuresSection, Jitter, RetryPolicy
from simulator.poison import (
    PoisonOutcome,
    backoff_schedule,
    backoffs_for_policy,
    events_behind,
    expected_wait_seconds,
    partition_rate_eps,
    poison_stall,
    poison_stall_for_design,
    stall_seconds,
)


def test_worked_item_8_stall_31_seconds_and_12_9_events_behind() -> None:
    waits = backoff_schedule(5, base_seconds=1, multiplier=2)
    assert waits == [1, 2, 4, 8, 16]
    assert stall_seconds(waits) == 31
    rate = partition_rate_eps(20, 48)
    assert round(rate, 4) == 0.4167
    behind = events_behind(rate, 31)
    assert behind is not None and round(behind, 1) == 12.9


def test_worked_item_8_from_a_design_policy() -> None:
    failures = FailuresSection(
        retry=RetryPolicy(max_attempts=6, base_backoff_seconds=1, max_backoff_seconds=30),
        dead_letter_queue=DeadLetterQueue(enabled=True),
    )
    stall = poison_stall_for_design(failures, events_per_second=20, partitions=48)
    assert stall.retries == 5
    assert stall.stall_seconds == 31
    assert stall.events_behind is not None and round(stall.events_behind, 1) == 12.9
    assert stall.outcome is PoisonOutcome.dead_lettered
    assert "31 s" in stall.note and "12.9" in stall.note


def test_no_retry_limit_stalls_forever() -> None:
    failures = FailuresSection(retry=RetryPolicy(max_attempts=None))
    assert backoffs_for_policy(failures.retry) is None
    assert stall_seconds(None) is None
    stall = poison_stall_for_design(failures, events_per_second=20, partitions=48)
    assert stall.stall_seconds is None
    assert stall.events_behind is None
    assert stall.outcome is PoisonOutcome.stalls_forever
    assert "for good" in stall.note


def test_limit_without_dead_letter_queue_skips_and_loses() -> None:
    stall = poison_stall([1, 2], 10, 10, dead_letter_queue=False)
    assert stall.stall_seconds == 3
    assert stall.outcome is PoisonOutcome.skipped


def test_cap_attempt_time_and_jitter() -> None:
    assert backoff_schedule(6, 1, 2, max_backoff_seconds=10) == [1, 2, 4, 8, 10, 10]
    # 5 retries -> 6 attempts of 0.5 s each on top of the 31 s of waits.
    assert stall_seconds([1, 2, 4, 8, 16], attempt_seconds=0.5) == pytest.approx(34.0)
    assert expected_wait_seconds(8, Jitter.full) == 4
    assert expected_wait_seconds(8, "equal") == 6
    assert stall_seconds([1, 2, 4, 8, 16], jitter=Jitter.full) == pytest.approx(15.5)
    policy = RetryPolicy(max_attempts=4, base_backoff_seconds=2, max_backoff_seconds=5)
    assert backoffs_for_policy(policy) == [2, 4, 5]


def test_bad_input() -> None:
    with pytest.raises(ValueError):
        backoff_schedule(-1)
    with pytest.raises(ValueError):
        partition_rate_eps(20, 0)
    with pytest.raises(ValueError):
        stall_seconds([1, -2])
