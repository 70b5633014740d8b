"""The model provider as the agent group sees it: RPM, TPM, a concurrency limit, queues and retries.

Every agent step is one model call whose latency is the step time. The agent workers reach the
provider through a **model gateway** (a shared client: the response cache of
``simulator.faults.provider_outage`` sits there too) that knows the limits the design bought and
**meters** calls to them: a call that would exceed a limit waits at the gateway, first come first
served, instead of being sent to be refused with HTTP 429 (OpenAI's cookbook,
``api_request_parallel_processor.py``: "Throttles request and token usage, to stay under rate
limits"; an HTTP client's connection pool makes a request wait for a connection the same way).

- **max_concurrency**: at most ``max_concurrency`` calls in flight to the provider (admitted, not
  yet finished); a call beyond it waits for the earliest slot to free. A call whose consumer
  crashed keeps its slot until it finishes (the provider does not know).
- **RPM and TPM**: the provider enforces them as two token buckets replenished continuously at
  ``limit / 60`` per second, each holding at most **one second's allowance** (``limit / 60``;
  never less than one call's cost). Anthropic's rate-limit documentation: the token bucket's
  capacity "is continuously replenished up to your maximum limit, rather than being reset at
  fixed intervals", and limits "may be enforced over shorter time intervals", 60 RPM as 1 request
  per second; OpenAI's: limits "can be quantized", 60,000 requests/minute enforced as 1,000
  requests/second. The gateway keeps the same buckets and holds a call until both have room for
  it (1 request and ``tokens_per_call`` input + output tokens), so a burst above one second's
  allowance waits a fraction of a second instead of drawing 429s, and a backlog drains at
  exactly the limit. Both buckets start full.
- A call needing more tokens than a minute's TPM can never be sent: it is answered with HTTP 429
  (``REJECT_429``) every time, the only 429 left (a design error the retries cannot clear).
- **outages** (``add_outage``, for the faults layer): inside a window every call fails at once
  with an error instead of an answer.

The wait at the gateway (for a slot or for the buckets) is counted in ``gateway_wait_s``.
Admission is decided in time order (the consumer groups ask in non-decreasing time), so the
buckets, the in-flight heap and the gateway's queue are exact, not sampled: a queued call takes the
slot that frees first, and calls leave the gateway in the order they came.

Retries (of errors: an outage, a failover): a rejected call waits
``min(max_backoff, base x 2**(attempt-1))`` seconds, with jitter from the AWS Architecture Blog's
"Exponential Backoff And Jitter" (full: uniform in ``[0, w]``; equal: ``w/2`` plus uniform in
``[0, w/2]``), never less than :data:`MIN_RETRY_WAIT_S`.
"""

from __future__ import annotations

import bisect
import heapq
import math
import random

from simulator.closed_forms.provider import burst_capacity
from simulator.design import Jitter, ModelProvider, RetryPolicy

REJECT_429 = -1.0
"""``admit`` result: over a limit (HTTP 429), retry later."""
REJECT_DOWN = -2.0
"""``admit`` result: the resource is unavailable (an outage or failover), retry later."""


SLACK_TOLERANCE_S = 1e-9
"""Seconds of rounding a bucket forgives, so that summed floating-point costs never refuse a
call the bucket holds exactly."""

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

    def end_at(self, t: float) -> float:
        """Where the window holding ``t`` ends, or ``-inf`` when ``t`` is in none."""
        i = bisect.bisect_right(self.starts, t) - 1
        if i >= 0 and t < self.ends[i]:
            return self.ends[i]
        return -math.inf


class Interruptible:
    """Mixin for a capacity with outage windows: inside one, ``admit`` answers REJECT_DOWN.

    Each subclass's ``admit(t, step_s)`` begins with ``if self.outages.first <= t and
    self.refused_down(t): return REJECT_DOWN``: one comparison against ``inf`` until the first
    outage is added.
    """

    outages: Windows
    rejected_down: int
    first_down_s = 0.0
    """When the first request was refused as unavailable (seconds; 0 before any)."""
    last_down_s = 0.0
    """When the last request was refused as unavailable."""

    def add_outage(self, start: float, end: float) -> None:
        """Reject every request in ``[start, end)`` seconds."""
        self.outages.add(start, end)

    def admit(self, t: float, step_s: float) -> float:  # pragma: no cover - overridden
        """A request at ``t`` lasting ``step_s``: its finish time or a negative rejection code."""
        raise TypeError(f"{type(self).__name__} must define admit")

    def refused_down(self, t: float) -> bool:
        """True, counted in ``rejected_down`` / ``first_down_s`` / ``last_down_s``, when a
        request at ``t`` seconds falls inside an outage window."""
        outages = self.outages
        if outages.first <= t < outages.last and outages.contains(t):
            if not self.rejected_down:
                self.first_down_s = t
            self.last_down_s = t
            self.rejected_down += 1
            return True
        return False


class Provider(Interruptible):
    """Admission of model calls to one provider through the gateway (rules in the module docstring).

    ``tokens_per_call``: input + output tokens of one call. ``track_concurrency``: False when the
    group can never have ``max_concurrency`` calls in flight (fewer partitions than the limit),
    which skips the in-flight heap (and so the gateway never queues).

    The two buckets are kept in their virtual-scheduling form (the GCRA of ITU-T I.371, equivalent
    to a token bucket): ``tat`` is the time at which the bucket would be full again; a call of cost
    ``c`` fits at ``s`` when ``max(tat, s) - s <= (capacity - c) / rate``, so it leaves the
    gateway at the earliest such ``s`` at or after its slot frees, and then
    ``tat = max(tat, s) + c / rate``. Capacity: :func:`burst_capacity` of the limit.

    Counters: ``admitted`` (calls the provider started), ``gateway_wait_s`` (their total wait at
    the gateway for a concurrency slot and for the buckets, seconds), ``rejected_429`` (calls
    larger than a minute's TPM), ``rejected_down``.
    """

    def __init__(self, spec: ModelProvider, tokens_per_call: int, track_concurrency: bool = True):
        self.spec = spec
        req_rate = spec.rpm / 60.0
        tok_rate = spec.tpm / 60.0
        self.req_cost = 1.0 / req_rate
        # SLACK_TOLERANCE_S: a bucket holding exactly one call's cost admits it, whatever the
        # rounding of the summed costs.
        self.req_slack = (burst_capacity(spec.rpm, 1) - 1.0) / req_rate + SLACK_TOLERANCE_S
        self.tok_cost = tokens_per_call / tok_rate
        self.tok_slack = (
            burst_capacity(spec.tpm, tokens_per_call) - tokens_per_call
        ) / tok_rate + SLACK_TOLERANCE_S
        self.req_tat = 0.0
        self.tok_tat = 0.0
        self.tokens_per_call = tokens_per_call
        self.too_large = tokens_per_call > spec.tpm
        self.max_concurrency = spec.max_concurrency
        self.inflight: list[float] | None = [] if track_concurrency else None
        self.outages = Windows()
        self.rejected_429 = 0
        self.rejected_down = 0
        self.admitted = 0
        self.gateway_wait_s = 0.0
        self.hangs = Windows()

    def add_hang(self, start: float, end: float) -> None:
        """Calls tried in ``[start, end)`` hang until ``end`` and then fail (the provider held
        their connections and resets them all when it comes back); see :meth:`error_delay`."""
        self.hangs.add(start, end)

    def error_delay(self, t: float) -> float:
        """Seconds until a call tried at ``t`` gets its error, beyond the outage's own
        ``failure_seconds``: the rest of a hang window holding ``t``, else 0."""
        hangs = self.hangs
        if not hangs or not hangs.first <= t < hangs.last:
            return 0.0
        return max(0.0, hangs.end_at(t) - t)

    def admit(self, t: float, step_s: float) -> float:
        """Try a call at ``t`` lasting ``step_s``: its finish time (after its wait at the gateway
        for a concurrency slot and for room in the RPM and TPM buckets), or REJECT_429 for a call
        no minute's TPM can hold, or REJECT_DOWN in an outage."""
        if self.outages.first <= t and self.refused_down(t):
            return REJECT_DOWN
        if self.too_large:
            self.rejected_429 += 1
            return REJECT_429
        start = t
        inflight = self.inflight
        full = False
        if inflight is not None:
            while inflight and inflight[0] <= t:
                heapq.heappop(inflight)
            if len(inflight) >= self.max_concurrency:
                # Every slot is taken: the call waits at the gateway for the first to free.
                full = True
                start = inflight[0]
        # The buckets (GCRA): the call leaves the gateway once both hold its cost.
        ready = self.req_tat - self.req_slack
        if ready > start:
            start = ready
        ready = self.tok_tat - self.tok_slack
        if ready > start:
            start = ready
        finish = start + step_s
        if inflight is not None:
            if full:
                heapq.heapreplace(inflight, finish)
            else:
                heapq.heappush(inflight, finish)
        req = self.req_tat
        self.req_tat = (req if req > start else start) + self.req_cost
        tok = self.tok_tat
        self.tok_tat = (tok if tok > start else start) + self.tok_cost
        if start > t:
            self.gateway_wait_s += start - t
        self.admitted += 1
        return finish
