"""How a scenario's faults back up causal runs, and how long the queues take to empty after them.

With runs as causal task graphs (``load.run_model: causal``) a fault anywhere stalls runs: a run
whose next step cannot be applied produces nothing more, so every group's work waits, not only the
faulted group's (docs/simulator-model.md, "Estimate and simulation"). The rules, a fluid
approximation over the scenario's fault windows in time order, for the group whose queue takes
longest to empty (the drain group):

- **Work backlog.** During a window the runs' work of the drain group comes due at ``lambda`` and
  only the share of runs that keep moving gets it done: the backlog grows at
  ``lambda x stalled`` (``stalled``: the share of the group's work the fault holds; all of it
  for a fault that stops a whole group; for a partial stall, what the tasks that reached a
  stalled key hold, averaged over the window: :mod:`simulator.estimate.held`).
  Queued work on the partitions still served drains meanwhile at the capacity they have left.
  Between windows and after the last, the backlog drains at the headroom ``capacity - lambda``.
- **Released in order.** A stalled run resumes one step at a time, so the backlog reaches the
  queues over about one critical path of a run. When ``backlog / headroom`` is shorter than that,
  the queues keep up as the runs resume: nothing waits beyond normal and the drain is 0 (the runs
  still finish late by the stall). Otherwise the queues hold the backlog and it drains in
  ``backlog / headroom`` (Little's law and the fluid drain of :mod:`simulator.closed_forms.drain`).
- **Retries after an error.** After a fault that answers with errors (a state-store failover, a
  provider outage with nothing to fail over to) the callers are backing off: the first retry
  after the window comes on average :func:`retry_residual_s` later, and the drain starts then.
- **Rejoin after a short partial crash.** Crashed members back before anyone noticed rejoin (a
  rebalance) and work off what queued on their partitions before the runs held there move: the
  drain starts that much later (``Window.release_s``).
- **The busiest partitions.** A queued backlog is spread over the partitions by its keys, unevenly
  (a key carries a task's calls: balls into bins). The queues drain in parallel at an equal share
  of the headroom until fewer partitions than the headroom needs are left; those then work one
  event at a time (:func:`partition_drain_s`, processor sharing with a per-partition ceiling).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

from simulator.design import Jitter, RetryPolicy

_NORMAL = NormalDist()


@dataclass(frozen=True)
class Window:
    """One fault's effect on the drain group: ``start_s`` .. ``end_s`` seconds; ``stalled``, the
    share of runs it stops (0..1); ``served_share``, the share of the queued backlog on
    partitions still served; ``capacity_eps``, what those partitions can do meanwhile; ``retry``,
    the backoff of callers answered with errors (None for a fault that does not answer);
    ``hang``: the calls hang until the window ends and all fail then (their backoff starts at
    the end, not at the start); ``release_s``: seconds after the end until the stalled
    partitions work again and have done what queued on them (a partial crash that ends before
    it is noticed: the members rejoin first), the runs held there moving no sooner."""

    start_s: float
    end_s: float
    stalled: float
    served_share: float
    capacity_eps: float
    retry: RetryPolicy | None = None
    hang: bool = False
    release_s: float = 0.0


@dataclass(frozen=True)
class Spread:
    """How a backlog of calls spreads over ``partitions``: each key carries ``calls_per_key``
    calls on average, with mean square ``calls_per_key_sq`` (0 for events spread evenly)."""

    partitions: int
    calls_per_key: float
    calls_per_key_sq: float


@dataclass(frozen=True)
class Recovery:
    """The drain group's backlog at the end of the last window (calls), the largest it reached,
    and the seconds from that end until its queues are back to normal (None: never)."""

    backlog: float
    backlog_max: float
    drain_seconds: float | None


def retry_residual_s(policy: RetryPolicy, seconds: float) -> float:
    """Mean seconds from the end of a ``seconds`` long error window until a caller that failed at
    its start tries again, under ``policy`` (attempt ``k`` waits ``min(max, base x 2^(k-1))``);
    for ``seconds`` 0 (a caller failed at the end), its first wait's mean.

    Without jitter every caller is on one schedule: the next attempt after the window, exactly.
    With jitter the waits are random: the window ends inside the wait of attempt ``k`` (the
    schedule of mean waits), and the rest of a wait met at a random moment is its length-biased
    residual, ``E[W^2] / (2 E[W])``: ``w / 3`` for full jitter (uniform in ``[0, w]``),
    ``7 w / 18`` for equal jitter (uniform in ``[w/2, w]``) (renewal theory: the inspection
    paradox). Attempt limits are ignored (a transient error is retried until it clears)."""
    t = 0.0
    attempt = 1
    while True:
        w = min(
            policy.max_backoff_seconds, policy.base_backoff_seconds * 2.0 ** min(attempt - 1, 60)
        )
        w = max(w, 0.01)
        mean = (
            w
            if policy.jitter is Jitter.none
            else (w / 2 if policy.jitter is Jitter.full else 0.75 * w)
        )
        if seconds <= 0:
            return mean
        if policy.jitter is Jitter.none:
            if t + w >= seconds:
                return t + w - seconds
            t += w
        else:
            if t + mean >= seconds:
                return w / 3.0 if policy.jitter is Jitter.full else 7.0 * w / 18.0
            t += mean
        attempt += 1
        if attempt > 10_000:
            return 0.0


def partition_drain_s(
    backlog: float, spread: Spread, headroom_eps: float, partition_eps: float
) -> float:
    """Seconds for ``backlog`` calls spread over the partitions (``spread``) to drain when the
    group has ``headroom_eps`` calls/s to spare and each partition at most ``partition_eps``
    (one event at a time, less its own share of the load).

    The per-partition backlogs are the quantiles of a normal with the compound-Poisson mean and
    variance of ``spread`` (``m = B / P``, ``var = m x E[k^2] / E[k]``), clipped at 0; they drain
    by processor sharing: every non-empty partition gets ``min(partition_eps, headroom / n)``
    with ``n`` of them left. With ``calls_per_key_sq`` 0 (evenly spread) this is
    ``B / headroom`` unless one partition's share is the limit."""
    p = spread.partitions
    if backlog <= 0 or p <= 0 or headroom_eps <= 0 or partition_eps <= 0:
        return 0.0 if backlog <= 0 else math.inf
    mean = backlog / p
    sd = 0.0
    if spread.calls_per_key > 0 and spread.calls_per_key_sq > 0:
        sd = math.sqrt(mean * spread.calls_per_key_sq / spread.calls_per_key)
    loads = sorted(max(0.0, mean + sd * _NORMAL.inv_cdf((i + 0.5) / p)) for i in range(p))
    total = sum(loads)
    if total <= 0:
        return 0.0
    loads = [x * backlog / total for x in loads]
    t = done = 0.0
    left = p
    for load in loads:
        rate = min(partition_eps, headroom_eps / left)
        t += (load - done) / rate
        done = load
        left -= 1
    return t


def causal_recovery(
    windows: list[Window],
    arrivals_eps: float,
    capacity_eps: float,
    critical_path_s: float,
    spread: Spread,
    partition_eps: float,
) -> Recovery:
    """The drain group's backlog and drain after ``windows`` (rules in the module docstring).

    ``arrivals_eps`` and ``capacity_eps``: the group's load and capacity without faults;
    ``critical_path_s``: a run's critical path if nothing queued; ``spread`` and
    ``partition_eps`` for :func:`partition_drain_s`. No window: a zero backlog and drain; a
    capacity at or below the load: ``drain_seconds`` None."""
    if not windows:
        return Recovery(0.0, 0.0, 0.0)
    lam = arrivals_eps
    headroom = capacity_eps - lam
    backlog = peak = 0.0
    last_end = -math.inf
    residual = 0.0
    for w in sorted(windows, key=lambda x: x.start_s):
        if last_end > -math.inf and w.start_s > last_end and headroom > 0:
            backlog = max(0.0, backlog - headroom * (w.start_s - last_end))
        start = max(w.start_s, last_end) if last_end > -math.inf else w.start_s
        seconds = max(0.0, w.end_s - start)
        moving = lam * (1.0 - w.stalled)
        spare = max(0.0, w.capacity_eps - moving) * seconds
        served = min(backlog * w.served_share, spare)
        backlog = max(0.0, backlog - served) + lam * w.stalled * seconds
        peak = max(peak, backlog)
        if w.end_s >= last_end:
            residual = w.release_s
            if w.retry is not None:
                seconds = 0.0 if w.hang else w.end_s - w.start_s
                residual = max(residual, retry_residual_s(w.retry, seconds))
        last_end = max(last_end, w.end_s)
    if backlog <= 0:
        return Recovery(0.0, peak, 0.0)
    if headroom <= 0:
        return Recovery(backlog, peak, None)
    queued = backlog - headroom * critical_path_s
    if queued <= 0:
        return Recovery(backlog, peak, residual)
    drain = critical_path_s + partition_drain_s(queued, spread, headroom, partition_eps)
    return Recovery(backlog, peak, residual + drain)


# ---------------------------------------------------------------------- from a design and scenario


@dataclass(frozen=True)
class GroupShape:
    """What :func:`fault_windows` needs of one consumer group: its name, load ``arrivals_eps``
    and ``capacity_eps`` without faults, its ``partitions`` and ``partitions_per_run`` (how many
    of them one run's keys touch)."""

    name: str
    arrivals_eps: float
    capacity_eps: float
    partitions: int
    partitions_per_run: float


def distinct_partitions(keys: float, partitions: int) -> float:
    """Expected distinct partitions ``keys`` hashed keys land on: ``P (1 - (1 - 1/P)^keys)``."""
    if partitions <= 0 or keys <= 0:
        return 0.0
    return partitions * (1.0 - (1.0 - 1.0 / partitions) ** keys)
