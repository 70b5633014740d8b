"""The agent group's stage behind a circuit breaker and a fallback provider: :class:`ModelRouter`.

What it models is told in ``simulator.faults.provider_outage``, the layer that builds it (the
breaker, the fallback, the routing periods the response cache reads). It lives here, compiled
with the data plane (``simulator.native``), because the agent group calls its ``admit`` once per
model call.
"""

from __future__ import annotations

import bisect
import math

from simulator.engine.provider import REJECT_DOWN, Provider

PRIMARY = 0
"""Model version code of the primary provider."""
FALLBACK = 1
"""Model version code of the fallback provider."""


class ModelRouter:
    """The agent group's stage: the primary behind an optional circuit breaker and fallback.

    ``admit(t, step_s)`` returns the call's finish time or a rejection code, like
    :class:`simulator.engine.provider.Provider`. Counters: ``fallback_calls`` (admitted by the
    fallback), ``breaker_opened`` (times the breaker opened), ``fast_failures`` (calls failed at
    once by an open breaker without a fallback), ``primary_failures`` (calls sent to the failed
    primary, each waiting ``failure_s`` for its error: without a breaker every call of the
    outage; with one, ``failure_threshold`` calls before it opens and one trial call per
    ``open_seconds``).
    """

    def __init__(
        self,
        primary: Provider,
        fallback: Provider | None,
        *,
        breaker: bool,
        failure_threshold: int,
        open_seconds: float,
    ):
        self.primary = primary
        self.fallback = fallback
        self.breaker = breaker
        self.threshold = failure_threshold
        self.open_s = open_seconds
        self.failure_s = 0.0
        self.failures = 0
        self.is_open = False
        self.open_until = -math.inf
        self.fallback_calls = 0
        self.breaker_opened = 0
        self.fast_failures = 0
        self.unanswered = 0
        self.primary_failures = 0
        self.last_delay = 0.0
        self.on_fallback = False
        self.period_starts: list[float] = []
        self.period_ends: list[float] = []

    def add_outage(self, start: float, end: float) -> None:
        """The primary fails every call in ``[start, end)`` seconds."""
        self.primary.add_outage(start, end)

    def version_at(self, t: float) -> int:
        """The model version a call made at ``t`` was (or would be) answered by."""
        i = bisect.bisect_right(self.period_starts, t) - 1
        if i < 0:
            return PRIMARY
        return FALLBACK if t < self.period_ends[i] else PRIMARY

    def _route(self, t: float, fallback: bool) -> None:
        if fallback and not self.on_fallback:
            self.period_starts.append(t)
            self.period_ends.append(math.inf)
            self.on_fallback = True
        elif not fallback and self.on_fallback:
            self.period_ends[-1] = t
            self.on_fallback = False

    def _open(self, t: float) -> None:
        if not self.is_open:
            self.breaker_opened += 1
        self.is_open = True
        self.open_until = t + self.open_s

    def _primary_delay(self, t: float) -> float:
        """Seconds until a call tried at ``t`` gets the failed primary's error: the outage's
        ``failure_s``, or the rest of a hang window (:meth:`Provider.error_delay`)."""
        return max(self.failure_s, self.primary.error_delay(t))

    def _to_fallback(self, t: float, step_s: float, delay: float) -> float:
        fallback = self.fallback
        if fallback is None:
            self.last_delay = delay
            self.unanswered += 1
            if delay == 0.0:
                self.fast_failures += 1
            return REJECT_DOWN
        finish = fallback.admit(t, step_s)
        if finish < 0.0:
            self.unanswered += 1
            if finish == REJECT_DOWN:
                delay = max(delay, fallback.error_delay(t))
            self.last_delay = delay
            return finish
        self.fallback_calls += 1
        self._route(t, True)
        return finish + delay

    def admit(self, t: float, step_s: float) -> float:
        """Route a call tried at ``t`` lasting ``step_s``: its finish time or a rejection code."""
        if self.is_open:
            if t < self.open_until:
                return self._to_fallback(t, step_s, 0.0)
            finish = self.primary.admit(t, step_s)  # half open: one trial call
            if finish == REJECT_DOWN:
                self.primary_failures += 1
                self._open(t)
                return self._to_fallback(t, step_s, self._primary_delay(t))
            self.is_open = False
            self.failures = 0
            if finish >= 0.0:
                self._route(t, False)
            return finish
        finish = self.primary.admit(t, step_s)
        if finish == REJECT_DOWN:
            self.primary_failures += 1
            self.failures += 1
            if self.breaker and self.failures >= self.threshold:
                self._open(t)
            return self._to_fallback(t, step_s, self._primary_delay(t))
        if finish >= 0.0:
            self.failures = 0
            if self.on_fallback:
                self._route(t, False)
        self.last_delay = 0.0
        return finish
