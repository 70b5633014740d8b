"""The model provider as the agent group sees it: RPM, TPM, a concurrency limit, 429s and retries.

Every agent step is one model call whose latency is the step time. A call is *admitted* at the time
the partition's consumer tries it, or rejected with HTTP 429 when any limit is exceeded:

- **RPM and TPM**: two token buckets (the usual way providers enforce per-minute limits), each
  holding at most one minute's allowance and refilled continuously at ``limit / 60`` per second;
  a call takes 1 request and ``tokens_per_call`` (input + output) tokens. Both start full. Rejected
  calls take nothing from the buckets. A call needing more tokens than the TPM is never admitted.
- **max_concurrency**: calls in flight (admitted, not yet finished) may not exceed the limit.
  A call whose consumer crashed keeps its slot until it finishes (the provider does not know).
- **outages** (``add_outage``, for the faults layer): inside a window every call fails at once
  with an error instead of a 429.

Admission is decided in time order (the consumer groups ask in non-decreasing time), so the buckets
and the in-flight heap are exact, not sampled.

Retries: a rejected call waits ``min(max_backoff, base x 2**(attempt-1))`` seconds, with jitter
from the AWS Architecture Blog's "Exponential Backoff And Jitter" (full: uniform in ``[0, w]``;
equal: ``w/2`` plus uniform in ``[0, w/2]``), never less than :data:`MIN_RETRY_WAIT_S`.
"""

from __future__ import annotations

import bisect
import heapq
import math
import random

from simulator.design import Jitter, ModelProvider, RetryPolicy

REJECT_429 = -1.0
"""``admit`` result: over a limit (HTTP 429), retry later."""
REJECT_DOWN = -2.0
"""``admit`` result: the resource is unavailable (an outage or failover), retry later."""

MIN_RETRY_WAIT_S = 0.01
"""Floor of a retry wait in seconds, so a zero backoff cannot spin at one instant."""


def backoff_seconds(policy: RetryPolicy, attempt: int, rng: random.Random) -> float:
    """Seconds to wait before retry number ``attempt`` (1-based) under ``policy``.

    ``w = min(max_backoff_seconds, base_backoff_seconds x 2**(attempt-1))``; jitter as in the module
    docstring; at least :data:`MIN_RETRY_WAIT_S`.
    """
    exponent = min(attempt - 1, 60)
    wait = min(policy.max_backoff_seconds, policy.base_backoff_seconds * (2.0**exponent))
    if policy.jitter is Jitter.full:
        wait = rng.random() * wait
    elif policy.jitter is Jitter.equal:
        wait = wait / 2.0 + rng.random() * wait / 2.0
    return max(wait, MIN_RETRY_WAIT_S)


class Windows:
    """Sorted, non-overlapping ``[start, end)`` windows in seconds, looked up by bisection.

    ``first`` / ``last``: where the earliest window starts and the latest ends (``inf`` / ``-inf``
    with none), so a caller can skip the lookup for a time outside them all."""

    def __init__(self) -> None:
        self.starts: list[float] = []
        self.ends: list[float] = []
        self.first = math.inf
        self.last = -math.inf

    def add(self, start: float, end: float) -> None:
        """Add a window, merged with any it overlaps. Raises ``ValueError`` if ``end < start``."""
        if end < start:
            raise ValueError(f"window ends ({end}) before it starts ({start})")
        pairs = sorted([*zip(self.starts, self.ends, strict=True), (start, end)])
        merged: list[list[float]] = []
        for s, e in pairs:
            if merged and s <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], e)
            else:
                merged.append([s, e])
        self.starts = [m[0] for m in merged]
        self.ends = [m[1] for m in merged]
        self.first, self.last = self.starts[0], self.ends[-1]

    def __bool__(self) -> bool:
        return bool(self.starts)

    def contains(self, t: float) -> bool:
        """True when ``t`` lies inside a window."""
        i = bisect.bisect_right(self.starts, t) - 1
        return i >= 0 and t < self.ends[i]


class Interruptible:
    """Mixin for a capacity with outage windows: inside one, ``admit`` answers REJECT_DOWN.

    The class's own ``admit(t, step_s)`` stays the fast path until the first outage is added.
    """

    outages: Windows
    rejected_down: int

    def add_outage(self, start: float, end: float) -> None:
        """Reject every request in ``[start, end)`` seconds."""
        self.outages.add(start, end)
        self.admit = self._admit_unless_down  # type: ignore[method-assign]

    def admit(self, t: float, step_s: float) -> float:  # pragma: no cover - overridden
        """A request at ``t`` lasting ``step_s``: its finish time or a negative rejection code."""
        raise TypeError(f"{type(self).__name__} must define admit")

    def _admit_unless_down(self, t: float, step_s: float) -> float:
        outages = self.outages
        if outages.first <= t < outages.last and outages.contains(t):
            self.rejected_down += 1
            return REJECT_DOWN
        return type(self).admit(self, t, step_s)


class Provider(Interruptible):
    """Admission of model calls to one provider (see the module docstring for the rules).

    ``tokens_per_call``: input + output tokens of one call. ``track_concurrency``: False when the
    group can never have ``max_concurrency`` calls in flight (fewer partitions than the limit),
    which skips the in-flight heap.

    The two buckets are kept in their virtual-scheduling form (the GCRA of ITU-T I.371, equivalent
    to a token bucket): ``tat`` is the time at which the bucket would be full again; a call of cost
    ``c`` is admitted at ``t`` when ``max(tat, t) - t <= (capacity - c) / rate``, and then
    ``tat = max(tat, t) + c / rate``.
    """

    def __init__(self, spec: ModelProvider, tokens_per_call: int, track_concurrency: bool = True):
        self.spec = spec
        req_rate = spec.rpm / 60.0
        tok_rate = spec.tpm / 60.0
        self.req_cost = 1.0 / req_rate
        self.req_slack = (spec.rpm - 1.0) / req_rate
        self.tok_cost = tokens_per_call / tok_rate
        self.tok_slack = (spec.tpm - tokens_per_call) / tok_rate
        self.req_tat = 0.0
        self.tok_tat = 0.0
        self.tokens_per_call = tokens_per_call
        self.max_concurrency = spec.max_concurrency
        self.inflight: list[float] | None = [] if track_concurrency else None
        self.outages = Windows()
        self.rejected_429 = 0
        self.rejected_down = 0

    def admit(self, t: float, step_s: float) -> float:
        """Try a call at ``t`` lasting ``step_s``: its finish time, or REJECT_429 / REJECT_DOWN."""
        req = self.req_tat
        if req < t:
            req = t
        tok = self.tok_tat
        if tok < t:
            tok = t
        if req - t > self.req_slack or tok - t > self.tok_slack:
            self.rejected_429 += 1
            return REJECT_429
        finish = t + step_s
        inflight = self.inflight
        if inflight is not None:
            while inflight and inflight[0] <= t:
                heapq.heappop(inflight)
            if len(inflight) >= self.max_concurrency:
                self.rejected_429 += 1
                return REJECT_429
            heapq.heappush(inflight, finish)
        self.req_tat = req + self.req_cost
        self.tok_tat = tok + self.tok_cost
        return finish
