"""Poll batches: the time to process one, Kafka's max.poll.interval.ms, and what a crash
redelivers.

A Kafka consumer fetches up to max.poll.records events per poll and must poll again within
max.poll.interval.ms (default 300,000 ms) or be removed from its group. Committing after a batch,
a crashed instance redelivers at most the one batch it had not committed.
"""

from __future__ import annotations

import math


def batch_seconds(records: int, step_time_s: float, concurrency: int = 1) -> float:
    """Time to process one poll batch: ceil(records / concurrency) x step time.

    A batch of 50 at 2 s each, one at a time, takes 100 s. Raises ``ValueError`` for negative
    records or step time, or concurrency < 1.
    """
    if records < 0 or step_time_s < 0:
        raise ValueError("records and step time must be >= 0")
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    return math.ceil(records / concurrency) * step_time_s


def poll_interval_exceeded(
    records: int,
    step_time_s: float,
    max_poll_interval_ms: float = 300_000,
    concurrency: int = 1,
) -> bool:
    """True when processing a batch takes longer than max.poll.interval.ms (Kafka default 300000).

    Kafka treats a consumer that does not call poll() within max.poll.interval.ms as failed: it is
    removed from the group and its partitions (and uncommitted batch) go to another member.
    50 x 2 s = 100 s is fine; 50 x 7 s = 350 s > 300 s: kicked.
    """
    return batch_seconds(records, step_time_s, concurrency) * 1000.0 > max_poll_interval_ms


def redelivered_bound(instances: int, max_poll_records: int) -> int:
    """Most events redelivered when ``instances`` crash, committing after every batch.

    Each instance holds at most one uncommitted batch of max.poll.records: 4 x 50 = 200. Raises
    ``ValueError`` for a negative argument.
    """
    if instances < 0 or max_poll_records < 0:
        raise ValueError("instances and max_poll_records must be >= 0")
    return instances * max_poll_records
