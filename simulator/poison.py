"""Poison messages: how long a retried failure stalls its partition, and what queues behind it.

A poison message fails on every attempt. A consumer that retries it in place (blocking retries,
one event at a time per partition) holds up every later event of that partition until the retries
run out. With waits w1..wn between attempts the partition stalls for w1 + ... + wn seconds, plus
the attempts themselves; meanwhile the partition's arrivals queue behind it (rate x stall). Without
a retry limit the stall never ends.

Worked numbers: waits 1, 2, 4, 8, 16 s stall a partition 31 s (attempt time not counted); at 20
events/s over 48 partitions a partition receives 20 / 48 = 0.4167/s, so about 12.9 events queue
behind the poison message.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from simulator.design import FailuresSection, Jitter, RetryPolicy


def backoff_schedule(
    retries: int,
    base_seconds: float = 1.0,
    multiplier: float = 2.0,
    max_backoff_seconds: float | None = None,
) -> list[float]:
    """Waits before each retry: ``base * multiplier**(i-1)`` for retry i = 1..retries, capped.

    ``backoff_schedule(5)`` is ``[1, 2, 4, 8, 16]`` (seconds). Raises ``ValueError`` for negative
    retries, base or cap, or a multiplier below 1.
    """
    if retries < 0:
        raise ValueError(f"retries must be >= 0, got {retries}")
    if base_seconds < 0:
        raise ValueError(f"base_seconds must be >= 0, got {base_seconds}")
    if multiplier < 1:
        raise ValueError(f"multiplier must be >= 1, got {multiplier}")
    if max_backoff_seconds is not None and max_backoff_seconds < 0:
        raise ValueError(f"max_backoff_seconds must be >= 0, got {max_backoff_seconds}")
    waits = [base_seconds * multiplier**i for i in range(retries)]
    if max_backoff_seconds is not None:
        waits = [min(w, max_backoff_seconds) for w in waits]
    return waits


def backoffs_for_policy(policy: RetryPolicy) -> list[float] | None:
    """The design's retry policy as a list of waits in seconds, before jitter.

    ``max_attempts`` counts attempts in all, the first included, so there are ``max_attempts - 1``
    retries, waiting ``base * 2**(i-1)`` capped at ``max_backoff_seconds``. Returns ``None`` when
    the policy has no attempt limit (the retries never end).
    """
    if policy.max_attempts is None:
        return None
    return backoff_schedule(
        policy.max_attempts - 1,
        base_seconds=policy.base_backoff_seconds,
        multiplier=2.0,
        max_backoff_seconds=policy.max_backoff_seconds,
    )


def expected_wait_seconds(backoff_seconds: float, jitter: Jitter | str = Jitter.none) -> float:
    """Mean wait for a nominal backoff under a jitter scheme.

    none: the backoff itself; full: uniform on [0, b], mean b/2; equal: b/2 + uniform on [0, b/2],
    mean 3b/4. Source: Marc Brooker, "Exponential Backoff And Jitter", AWS Architecture Blog (2015).
    """
    jitter = Jitter(jitter)
    if jitter is Jitter.full:
        return backoff_seconds / 2.0
    if jitter is Jitter.equal:
        return backoff_seconds * 0.75
    return backoff_seconds


def stall_seconds(
    backoffs_seconds: Sequence[float] | None,
    attempt_seconds: float = 0.0,
    jitter: Jitter | str = Jitter.none,
) -> float | None:
    """Seconds a poison message holds its partition: the (mean) waits plus every attempt.

    ``backoffs_seconds`` lists the waits before each retry; there are ``len + 1`` attempts of
    ``attempt_seconds`` each. ``None`` (no retry limit) returns ``None``: the stall never ends.
    ``stall_seconds([1, 2, 4, 8, 16])`` is 31.0. Raises ``ValueError`` for a negative value.
    """
    if backoffs_seconds is None:
        return None
    if attempt_seconds < 0 or any(b < 0 for b in backoffs_seconds):
        raise ValueError("waits and attempt time must be >= 0")
    waits = sum(expected_wait_seconds(b, jitter) for b in backoffs_seconds)
    return waits + (len(backoffs_seconds) + 1) * attempt_seconds


def partition_rate_eps(events_per_second: float, partitions: int) -> float:
    """Events per second one partition receives when events spread evenly: rate / partitions.

    Raises ``ValueError`` for fewer than one partition or a negative rate.
    """
    if partitions < 1:
        raise ValueError(f"partitions must be >= 1, got {partitions}")
    if events_per_second < 0:
        raise ValueError(f"events_per_second must be >= 0, got {events_per_second}")
    return events_per_second / partitions


def events_behind(partition_eps: float, stall_s: float | None) -> float | None:
    """Events that queue behind the poison message: partition rate x stall (Little's law).

    ``None`` when the stall never ends (the queue grows without bound).
    """
    if stall_s is None:
        return None
    return partition_eps * stall_s


class PoisonOutcome(StrEnum):
    """What finally happens to a poison message."""

    dead_lettered = "dead_lettered"
    skipped = "skipped"
    stalls_forever = "stalls_forever"


@dataclass(frozen=True)
class PoisonStall:
    """A poison message's effect on its partition.

    ``stall_seconds`` and ``events_behind`` are ``None`` when the stall never ends; ``outcome``
    says where the message goes; ``note`` explains it in a sentence with the figures.
    """

    stall_seconds: float | None
    partition_eps: float
    events_behind: float | None
    retries: int | None
    outcome: PoisonOutcome
    note: str


def poison_stall(
    backoffs_seconds: Sequence[float] | None,
    events_per_second: float,
    partitions: int = 1,
    *,
    attempt_seconds: float = 0.0,
    jitter: Jitter | str = Jitter.none,
    dead_letter_queue: bool = True,
) -> PoisonStall:
    """Stall and queue behind a poison message on one partition.

    Args:
        backoffs_seconds: waits before each retry, or ``None`` for retries without a limit.
        events_per_second: arrivals to the whole topic; ``partitions`` spreads them evenly.
        attempt_seconds: duration of one failing attempt (0 = not counted, as in the worked case).
        jitter: jitter of the waits (the mean is used).
        dead_letter_queue: where the message goes after the last retry (else it is skipped and
            its effect is lost).
    """
    rate = partition_rate_eps(events_per_second, partitions)
    stall = stall_seconds(backoffs_seconds, attempt_seconds, jitter)
    behind = events_behind(rate, stall)
    if stall is None or behind is None:
        return PoisonStall(
            stall_seconds=None,
            partition_eps=rate,
            events_behind=None,
            retries=None,
            outcome=PoisonOutcome.stalls_forever,
            note=(
                f"No retry limit: the partition stalls for good and its lag grows by "
                f"{rate:.4g} events every second."
            ),
        )
    retries = len(backoffs_seconds or [])
    outcome = PoisonOutcome.dead_lettered if dead_letter_queue else PoisonOutcome.skipped
    where = (
        "then it is parked in the dead-letter queue"
        if dead_letter_queue
        else "then it is skipped and its effect is lost"
    )
    return PoisonStall(
        stall_seconds=stall,
        partition_eps=rate,
        events_behind=behind,
        retries=retries,
        outcome=outcome,
        note=(
            f"{retries} retries stall the partition {stall:.4g} s; at {rate:.4g} events/s about "
            f"{behind:.3g} events queue behind it; {where}."
        ),
    )


def poison_stall_for_design(
    failures: FailuresSection,
    events_per_second: float,
    partitions: int,
    attempt_seconds: float = 0.0,
) -> PoisonStall:
    """:func:`poison_stall` for a design's ``failures`` section (retry policy and dead letters)."""
    return poison_stall(
        backoffs_for_policy(failures.retry),
        events_per_second,
        partitions,
        attempt_seconds=attempt_seconds,
        jitter=failures.retry.jitter,
        dead_letter_queue=failures.dead_letter_queue.enabled,
    )
