"""A consumer group's pause and replay by arithmetic: the backlog, the replayed events, the
effects repeated and lost, and the drain (the rules of ``simulator.faults.replay``, the
simulation of the same fault, with events spread evenly)."""

from __future__ import annotations

from dataclasses import dataclass

from simulator.design import AutoOffsetReset, Dedupe, Design
from simulator.scenario import ConsumerPause


@dataclass(frozen=True)
class ReplayEstimate:
    """Closed-form outcome of a pause (all counts in step events, times in seconds).

    ``backlog``: events that arrived while the group was away; ``replayed``: applied events read
    again; ``duplicate_effects``: replayed events whose dedupe record was gone; ``lost``: events
    skipped by ``latest`` or deleted unread; ``offset_reset_error``: ``none`` raised;
    ``drain_seconds``: backlog / (capacity - arrivals), None when capacity <= arrivals.
    """

    backlog: float
    replayed: float
    duplicate_effects: float
    lost: float
    offset_reset_error: bool
    restarted_s: float
    drain_seconds: float | None
    note: str


def pause_replay_estimate(
    design: Design,
    arrivals_eps: float,
    capacity_eps: float,
    pause: ConsumerPause,
    window_start_s: float = 0.0,
) -> ReplayEstimate:
    """The outcome of ``pause`` for a group receiving ``arrivals_eps`` with ``capacity_eps``.

    The same rules as the simulation (module docstring) with events spread evenly: an event applied
    at time ``a`` (its arrival; the group keeps up before the pause) and replayed at ``r`` finds
    its dedupe record when ``r - a <= dedupe_key_retention_hours``. The replay is taken to happen
    at the restart (replayed events that are skipped take no time), so the key ages are exact for
    the first replayed events and slightly low for the last. ``window_start_s``: the first event's
    time (nothing before it exists to replay). Raises ``ValueError`` for a negative rate.
    """
    if arrivals_eps < 0 or capacity_eps < 0:
        raise ValueError("rates must be >= 0")
    t0 = max(float(pause.at_seconds), window_start_s)
    t1 = t0 + pause.duration_seconds
    log = design.event_log
    delivery = design.delivery
    expired = pause.duration_seconds > pause.offsets_retention_hours * 3600.0
    reset = log.auto_offset_reset
    restart = t1 + (
        pause.operator_response_seconds if expired and reset is AutoOffsetReset.none else 0.0
    )
    log_start = max(window_start_s, restart - log.retention_hours * 3600.0)
    deleted_unread = arrivals_eps * max(0.0, min(log_start, restart) - t0)
    backlog = arrivals_eps * (restart - t0)
    replayed = duplicates = 0.0
    lost = deleted_unread
    if expired and reset is AutoOffsetReset.latest:
        lost = backlog
        backlog = 0.0
    elif expired:
        replayed = arrivals_eps * max(0.0, t0 - log_start)
        keys_from = restart - delivery.dedupe_key_retention_hours * 3600.0
        if delivery.dedupe is Dedupe.durable_same_transaction:
            duplicates = arrivals_eps * max(0.0, min(t0, keys_from) - log_start)
        else:
            duplicates = replayed
    backlog -= deleted_unread
    headroom = capacity_eps - arrivals_eps
    work = backlog + duplicates
    drain = work / headroom if headroom > 0 else None
    note = (
        f"offsets {'expired' if expired else 'kept'}; "
        f"{'auto.offset.reset=' + reset.value if expired else 'resumed from the committed offset'}"
    )
    return ReplayEstimate(
        backlog=backlog,
        replayed=replayed,
        duplicate_effects=duplicates,
        lost=lost,
        offset_reset_error=expired and reset is AutoOffsetReset.none,
        restarted_s=restart,
        drain_seconds=drain,
        note=note,
    )
