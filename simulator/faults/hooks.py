"""The faults layer's hooks on one consumer group (``ConsumerGroup.faults`` in the engine).

The data plane (``simulator.engine.consumers``) calls these on its rare paths only:

- :meth:`GroupHooks.retry_wait`: a step was rejected. An unavailable resource (a provider outage,
  a state-store failover: ``REJECT_DOWN``) and a rate limit (HTTP 429) are *transient* failures
  (seed 000: "a rate limit or timeout is transient, so retry with backoff"): the consumer retries
  with the group's backoff (exponential, capped at ``max_backoff_seconds``, with the design's
  jitter) for as long as it takes, never dead-lettering the event, and commits nothing past it. A
  call that no provider could ever admit (more tokens than its TPM) keeps the engine's own rule:
  the retry policy's attempt limit, then ``failures.retry`` and the dead-letter queue.
- :meth:`GroupHooks.on_repeat`: an agent step is about to run again (a redelivered step that had
  completed, or one whose call a crash abandoned); the response cache and recorded results decide
  whether the model is called again (:class:`simulator.faults.provider_outage.RepeatPolicy`).
- :meth:`GroupHooks.on_slow_batch`: a batch outlasted ``max_poll_interval_ms``; returns True when
  its commit fails because the member was kicked (:mod:`simulator.faults.rebalance`).
- :meth:`GroupHooks.on_give_up`: an event was dead-lettered, parked or dropped
  (:mod:`simulator.faults.poison` listens to it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from simulator.engine.provider import REJECT_429, REJECT_DOWN, backoff_seconds

if TYPE_CHECKING:
    from simulator.engine.consumers import ConsumerGroup
    from simulator.engine.partition import Partition

RepeatHook = Callable[["ConsumerGroup", "Partition", int, float, bool], int]
SlowBatchHook = Callable[["ConsumerGroup", "Partition", float], bool]
GiveUpHook = Callable[["ConsumerGroup", "Partition", int, float, bool], None]
DelayHook = Callable[[float], float]


class GroupHooks:
    """Hooks of one consumer group; each part of the faults layer plugs its callable in.

    ``repeat``: decides a repeated agent step (see the module docstring); ``slow_batch``: handles a
    batch over ``max_poll_interval_ms``; ``give_up``: listeners told of every event given up;
    ``reject_delay``: extra seconds before the consumer learns of a ``REJECT_DOWN`` (a call that
    takes its time to fail), given the time of the rejection.
    """

    def __init__(self, group: ConsumerGroup, rate_limit_is_permanent: bool = False):
        self.group = group
        self.rate_limit_is_permanent = rate_limit_is_permanent
        self.repeat: RepeatHook | None = None
        self.slow_batch: SlowBatchHook | None = None
        self.give_up: list[GiveUpHook] = []
        self.reject_delay: DelayHook | None = None
        self.transient_retries = 0

    def retry_wait(self, part: Partition, t: float, code: float) -> float:
        """Seconds until ``part``'s rejected step is tried again, or -1 for the engine's own rule.

        Transient (``REJECT_DOWN``, or a 429 that could succeed later):
        ``backoff_seconds(group.retry_policy, attempt)`` (exponential, capped at
        ``max_backoff_seconds``, jittered), plus any ``reject_delay`` for an unavailable provider;
        never dead-lettered.
        """
        group = self.group
        if code == REJECT_DOWN:
            wait = backoff_seconds(group.retry_policy, part.attempt, group.rng)
            if self.reject_delay is not None:
                wait += self.reject_delay(t)
        elif code == REJECT_429 and not self.rate_limit_is_permanent:
            wait = backoff_seconds(group.retry_policy, part.attempt, group.rng)
        else:
            return -1.0
        self.transient_retries += 1
        return wait

    def on_repeat(self, part: Partition, pos: int, t: float, completed: bool) -> int:
        """A repeated agent step at ``t``: 0 call the model, 2 answered without a call, -1 the
        engine's own rule."""
        if self.repeat is None:
            return -1
        return self.repeat(self.group, part, pos, t, completed)

    def on_slow_batch(self, part: Partition, t: float) -> bool:
        """A batch of ``part`` ended at ``t`` after ``max_poll_interval_ms``: True if kicked."""
        if self.slow_batch is None:
            return False
        return self.slow_batch(self.group, part, t)

    def on_give_up(self, part: Partition, pos: int, t: float, dead_lettered: bool) -> None:
        """Offset ``pos`` of ``part`` was given up at ``t`` (dead-lettered/parked, or dropped)."""
        for listener in self.give_up:
            listener(self.group, part, pos, t, dead_lettered)
