"""``consumer_pause``: a consumer group stops for hours, then comes back and maybe replays.

At ``at_seconds`` every member of the group stops (each finishes and commits its current batch,
unless ``mid_batch``); the processes are gone, and with them any in-memory dedupe. Nothing is
consumed while the group is away: its partitions are parked, so the paused hours cost no work in
the simulation, however long they are. After ``duration_seconds`` new members join and start:

- from the committed offset, when the brokers still hold it: an empty group's offsets are kept
  ``offsets_retention_hours`` (Kafka's ``offsets.retention.minutes``), and the log must still hold
  that offset (events older than ``event_log.retention_hours`` are deleted);
- otherwise ``event_log.auto_offset_reset`` decides (seed 000's failure scenario 7):
  ``earliest`` replays the log from its oldest event, so events already applied come back and
  only dedupe records younger than ``delivery.dedupe_key_retention_hours`` recognise them (each
  event's key age is its replay time minus the time it was applied: worked-numbers item 5);
  ``latest`` jumps to the end of the log and silently skips every event it had not processed
  (counted in ``lost``); ``none`` raises on every partition (counted in ``offset_reset_errors``,
  nothing lost), an operator resets the group to the earliest offset ``operator_response_seconds``
  later, and the replay proceeds as with earliest.

With ``operator_reset: earliest`` an operator resets the stopped group to the earliest offset the
log holds (``kafka-consumer-groups --reset-offsets --to-earliest``, a deliberate replay to
reprocess), and it restarts there whatever its committed offsets and ``auto.offset.reset``: the
replay reaches every applied event the log still holds, so the dedupe records are judged against
the log's own retention.

Events deleted by the log's retention before the group read them are lost in every case.

:func:`simulator.closed_forms.replay.pause_replay_estimate` gives the same figures by arithmetic
from rates, for pauses at loads too large to simulate event by event (48 h at the evening peak is
about 6 million step events).
"""

from __future__ import annotations

import bisect
from collections.abc import Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import simpy

from simulator.design import AutoOffsetReset
from simulator.engine.hooks import FaultLayer, amend
from simulator.result import FaultWindow, SimulationResult
from simulator.scenario import ConsumerPause

if TYPE_CHECKING:
    from simulator.engine.consumers import ConsumerGroup
    from simulator.engine.partition import Partition
    from simulator.engine.run import Simulation
    from simulator.scenario import Fault


@dataclass
class PauseOutcome:
    """What one pause did: where the group restarted and why; counts in step events."""

    group: str
    returned_s: float
    restarted_s: float
    offsets_expired: bool
    reset: str | None
    replayed: int = 0
    skipped: int = 0
    deleted_unread: int = 0
    offset_reset_errors: int = 0
    operator_reset: bool = False


class ConsumerPauses(FaultLayer):
    """``consumer_pause`` faults (see the module docstring): one :class:`PauseOutcome` per fault
    in ``outcomes``. Contributes ``offset_reset_errors``, ``offset_reset_skipped`` and a note per
    pause."""

    kinds = ("consumer_pause",)

    def __init__(self) -> None:
        self.outcomes: list[PauseOutcome] = []

    def start(self, sim: Simulation, fault: Fault) -> Generator[simpy.Event, Any, None]:
        """SimPy process of a ``consumer_pause`` (see the module docstring)."""
        assert isinstance(fault, ConsumerPause)
        env = sim.env
        group = sim.groups[fault.group]
        yield env.timeout(fault.at_seconds)
        t0 = float(fault.at_seconds)
        group.advance(t0)
        members = [i for i in range(group.instances) if group.alive[i] and i not in group.stopping]
        group.crash(t0, members, mid_batch=fault.mid_batch)
        yield env.timeout(fault.duration_seconds)
        t1 = t0 + fault.duration_seconds
        group.advance(t1)
        log = sim.design.event_log
        expired = fault.duration_seconds > fault.offsets_retention_hours * 3600.0
        out_of_range = any(
            part.committed < _log_start(part, t1 - log.retention_hours * 3600.0)
            for part in group.parts
        )
        reset = log.auto_offset_reset if expired or out_of_range else None
        if fault.operator_reset == "earliest":
            reset = AutoOffsetReset.earliest
        restart_at = t1
        if reset is AutoOffsetReset.none:
            restart_at = t1 + fault.operator_response_seconds
        outcome = PauseOutcome(
            group.name,
            t1,
            restart_at,
            expired,
            reset.value if reset is not None else None,
            operator_reset=fault.operator_reset is not None,
        )
        sim.fault_windows.append(FaultWindow(kind=fault.kind, start_s=t0, end_s=restart_at))
        self.outcomes.append(outcome)
        if reset is AutoOffsetReset.none:
            outcome.offset_reset_errors = sum(1 for part in group.parts if part.n)
            if restart_at > t1:
                yield env.timeout(restart_at - t1)
            group.advance(restart_at)
        deleted_before = restart_at - log.retention_hours * 3600.0
        for part in group.parts:
            start = _log_start(part, deleted_before)
            if reset is None:
                target = part.committed
            elif reset is AutoOffsetReset.latest:
                target = part.log_end(restart_at)
            else:
                target = start
            if target < start:
                target = start
            outcome.deleted_unread += max(0, start - max(part.hw, part.committed))
            seek(group, part, target, outcome)
        group.restart(restart_at, members)

    def contribute(self, sim: Simulation, result: SimulationResult) -> SimulationResult:
        """The offset-reset errors and skipped events, a note per pause."""
        pauses = self.outcomes
        if not pauses:
            return result
        notes: list[str] = []
        for p in pauses:
            if p.operator_reset:
                how = f"reset by an operator to the {p.reset} offsets"
            elif p.reset is None:
                how = "resumed from its committed offsets"
            else:
                how = (
                    f"found its offsets {'expired' if p.offsets_expired else 'out of range'}; "
                    f"auto.offset.reset={p.reset}"
                )
            notes.append(
                f"{p.group} group back at {p.returned_s:g} s {how}, restarted at "
                f"{p.restarted_s:g} s: {p.replayed} applied events replayed, {p.skipped} skipped"
            )
        return amend(
            result,
            notes,
            offset_reset_errors=sum(p.offset_reset_errors for p in pauses),
            offset_reset_skipped=sum(p.skipped for p in pauses),
        )


def _log_start(part: Partition, deleted_before_s: float) -> int:
    """First offset of ``part`` still in the log: events that arrived before ``deleted_before_s``
    are deleted by retention."""
    return bisect.bisect_left(part.arrival, deleted_before_s)


def seek(group: ConsumerGroup, part: Partition, target: int, outcome: PauseOutcome) -> None:
    """Move the parked ``part``'s committed offset (and position) to ``target``.

    Below the offsets already processed, the group will read applied events again (counted as
    redelivered when fetched; dedupe decides each one). Above them, every unprocessed event in
    between is skipped and counted lost. Raises ``ValueError`` for an offset outside the log.
    """
    if not 0 <= target <= part.n:
        raise ValueError(f"offset {target} outside partition {part.pid} (0..{part.n})")
    old = part.committed
    if target < part.hw:
        part.refetch_until = max(part.refetch_until, part.hw)
        outcome.replayed += part.hw - target
    elif target > part.hw:
        gone = target - part.hw
        group.lost += gone
        group.never_started_gone += max(0, target - max(part.started_max, part.hw))
        outcome.skipped += gone
        part.hw = target
        part.started_max = max(part.started_max, target)
    part.committed = target
    part.pos = target
    part.batch_end = target
    group.committed_sum += target - old
