"""Transient failures: an unavailable resource or a rate limit is retried, never dead-lettered.

In every simulation (:class:`TransientRetries`, a fault layer's ``retry_wait`` hook): an
unavailable resource (a provider outage, a state-store failover: ``REJECT_DOWN``) and a rate limit
(HTTP 429) are *transient* failures (seed 000: "a rate limit or timeout is transient, so retry with
backoff"): the consumer retries with the group's backoff (exponential, capped at
``max_backoff_seconds``, with the design's jitter) for as long as it takes, never dead-lettering
the event, and commits nothing past it. A call that no provider could ever admit (more tokens
than its TPM) keeps the engine's own rule: the retry policy's attempt limit, then
``failures.retry`` and the dead-letter queue.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from simulator.design import Design
from simulator.engine.hooks import FaultLayer, Layers
from simulator.engine.provider import REJECT_429, REJECT_DOWN, backoff_seconds
from simulator.scenario import Scenario

if TYPE_CHECKING:
    from simulator.engine.consumers import ConsumerGroup
    from simulator.engine.partition import Partition
    from simulator.engine.run import Simulation

DelayHook = Callable[[float], float]
"""Extra seconds before a consumer learns of a ``REJECT_DOWN`` at a time (a call that takes its
time to fail)."""


class TransientRetries(FaultLayer):
    """Retries of transient failures (see the module docstring); in every simulation.

    ``reject_delays``: per group name, a :data:`DelayHook` another layer sets (the provider
    outage's time to fail). ``rate_limit_is_permanent``: no provider can ever admit a call (its
    429s follow the engine's own rule). Counters: ``transient_retries``; ``rate_limit_wait_s``,
    the seconds model calls spent backing off after 429s (the provider wait besides the
    gateway's queue); ``model_last_retry_s``, when the agent group's last transient retry was
    tried (the last attempt of a chain is the one that went through), ``-inf`` with none;
    ``state_retry_at``: per state write refused as unavailable (partition, offset), when its last
    retry was due (the one that went through).
    """

    def __init__(self) -> None:
        self.rate_limit_is_permanent = False
        self.reject_delays: dict[str, DelayHook] = {}
        self.transient_retries = 0
        self.rate_limit_wait_s = 0.0
        self.model_last_retry_s = -math.inf
        self.state_retry_at: dict[tuple[int, int], float] = {}

    @classmethod
    def wanted(cls, design: Design, scenario: Scenario) -> bool:
        """Always installed: rate limits and outages are transient in every simulation."""
        return True

    def install(self, sim: Simulation, layers: Layers) -> None:
        """Decide whether a 429 can ever clear: not when a call's tokens exceed the TPM of the
        primary and of the fallback (or there is none)."""
        model = sim.design.model
        tokens = sim.workload.tokens_per_call
        self.rate_limit_is_permanent = tokens > model.primary.tpm and (
            not model.fallback.enabled or tokens > model.fallback.tpm
        )

    def retry_wait(self, group: ConsumerGroup, part: Partition, t: float, code: float) -> float:
        """Seconds until ``part``'s rejected step is tried again, or -1 for the engine's own rule.

        Transient (``REJECT_DOWN``, or a 429 that could succeed later):
        ``backoff_seconds(group.retry_policy, attempt)`` (exponential, capped at
        ``max_backoff_seconds``, jittered), plus the group's reject delay for ``REJECT_DOWN``;
        never dead-lettered.
        """
        if code == REJECT_DOWN:
            wait = backoff_seconds(group.retry_policy, part.attempt, group.rng)
            delay = self.reject_delays.get(group.name)
            if delay is not None:
                wait += delay(t)
        elif code == REJECT_429 and not self.rate_limit_is_permanent:
            wait = backoff_seconds(group.retry_policy, part.attempt, group.rng)
            self.rate_limit_wait_s += wait
        else:
            return -1.0
        self.transient_retries += 1
        if code == REJECT_DOWN and group.name == "state":
            self.state_retry_at[(part.pid, part.pos)] = t + wait
        if group.is_agent and t + wait > self.model_last_retry_s:
            self.model_last_retry_s = t + wait
        return wait
