"""Poll batches: worked-numbers items 3 (max.poll.interval.ms) and 9 (redelivered after a crash)."""

from __future__ import annotations

import pytest

from simulator.closed_forms.batches import batch_seconds, poll_interval_exceeded, redelivered_bound


def test_item_3_poll_interval() -> None:
    assert batch_seconds(50, 2.0) == 100
    assert not poll_interval_exceeded(50, 2.0)
    assert batch_seconds(50, 7.0) == 350
    assert poll_interval_exceeded(50, 7.0, max_poll_interval_ms=300_000)
    # Concurrency across the batch's partitions shortens it: 50 / 4 -> 13 rounds of 7 s = 91 s.
    assert batch_seconds(50, 7.0, concurrency=4) == 91
    assert not poll_interval_exceeded(50, 7.0, concurrency=4)
    # Exactly at the limit is not over it.
    assert not poll_interval_exceeded(50, 6.0)


def test_item_9_a_crash_redelivers_at_most_one_batch_per_instance() -> None:
    assert redelivered_bound(4, 50) == 200
    assert redelivered_bound(0, 50) == 0


def test_bad_arguments_raise() -> None:
    with pytest.raises(ValueError):
        batch_seconds(50, 2.0, concurrency=0)
    with pytest.raises(ValueError):
        batch_seconds(-1, 2.0)
    with pytest.raises(ValueError):
        redelivered_bound(-1, 50)
