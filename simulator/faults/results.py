"""The faults layer's figures in the result: metrics it counts and a note per fault.

:func:`finish` runs after the last event, before the engine assembles the result (so fault
windows it adds count for ``drain_seconds``); :func:`merge_result` adds the faults' counts to the
engine's metrics:

- ``lost`` += acknowledged events a broker loss took from the log (the engine already counts
  events skipped by ``auto.offset.reset=latest`` and events dropped after their retries);
  ``log_lost`` and ``offset_reset_skipped`` tell the two faults' shares of ``lost`` apart;
- ``duplicate_effects`` += saga compensations applied twice or out of order;
- ``order_violations``, ``wrong_model_version_served``, ``fallback_calls``, ``state_writes_lost``,
  ``state_writes_rebuilt``, ``saga_compensations``, ``sagas_to_human_queue``,
  ``producer_blocked_seconds``, ``offset_reset_errors``: counted by the faults layer alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from simulator.faults import poison
from simulator.faults.failover import count_missing
from simulator.faults.saga import count as count_sagas
from simulator.faults.saga import sagas_note
from simulator.result import SimulationResult

if TYPE_CHECKING:
    from simulator.engine.run import Simulation


def finish(sim: Simulation) -> None:
    """After the window's last event: close open poison stalls, count order violations, the
    failovers' missing writes and the sagas."""
    poison.finish(sim)
    for outcome in sim.extensions.get("failovers", []):
        count_missing(sim, outcome)
    state = sim.extensions.get("sagas")
    if state is not None:
        count_sagas(sim, state)


def merge_result(sim: Simulation, result: SimulationResult) -> SimulationResult:
    """``result`` with the faults layer's counts added to its metrics and notes."""
    ext = sim.extensions
    m = result.metrics
    update: dict[str, Any] = {}
    notes: list[str] = []

    router = ext.get("router")
    if router is not None:
        update["fallback_calls"] = router.fallback_calls
        if router.breaker_opened:
            notes.append(
                f"circuit breaker opened {router.breaker_opened} times; {router.fallback_calls} "
                f"calls went to the fallback"
            )
    repeat = ext.get("repeat")
    if repeat is not None:
        update["wrong_model_version_served"] = repeat.wrong_model_version_served

    rework = ext.get("rework")
    if rework is not None and rework.calls_redone:
        notes.append(
            f"checkpoint {sim.design.checkpoint.granularity}: {rework.runs_resumed} runs resumed "
            f"from their checkpoint redid {rework.calls_redone} model calls "
            f"({rework.seconds_redone:.0f} worker-seconds)"
        )

    kicks = ext.get("kicks", {})
    kicked = sum(k.kicks for k in kicks.values())
    if kicked:
        notes.append(
            f"{kicked} members kicked for batches over max.poll.interval.ms (each a leave and a "
            f"rejoin: two rebalances)"
        )

    failovers = ext.get("failovers", [])
    if failovers:
        update["state_writes_lost"] = sum(f.lost for f in failovers)
        update["state_writes_rebuilt"] = sum(f.rebuilt for f in failovers)
        for f in failovers:
            notes.append(
                f"state failover {f.start_s:g}-{f.end_s:g} s: {f.missing} acknowledged writes "
                f"missing on the new primary ({f.rebuilt} rebuilt from the log, {f.lost} lost)"
            )

    states = ext.get("poison", {})
    if states:
        update["order_violations"] = m.order_violations + sum(
            s.order_violations for s in states.values()
        )
        for s in states.values():
            done = [x.seconds for x in s.poison.values() if x.seconds is not None]
            stuck = sum(1 for x in s.poison.values() if x.given_up_s is None and x.behind)
            mean = sum(done) / len(done) if done else 0.0
            notes.append(
                f"poison in {s.group}: {s.marked} events, {len(done)} given up after a mean stall "
                f"of {mean:.1f} s, {stuck} still stalling; {s.quarantined} parked behind their key"
            )

    losses = ext.get("broker_losses", [])
    if losses:
        update["lost"] = m.lost + sum(b.lost for b in losses)
        update["log_lost"] = sum(b.lost for b in losses)
        update["producer_blocked_seconds"] = float(sum(b.blocked_seconds for b in losses))
        for b in losses:
            notes.append(
                f"broker loss {b.start_s:g}-{b.end_s:g} s: {b.lost} acknowledged events lost "
                f"({b.lost_after_read} already read), {b.blocked_partitions} partitions refused "
                f"writes, {b.delayed} events waited in producers"
            )

    pauses = ext.get("pauses", [])
    if pauses:
        update["offset_reset_errors"] = sum(p.offset_reset_errors for p in pauses)
        update["offset_reset_skipped"] = sum(p.skipped for p in pauses)
        for p in pauses:
            how = (
                "resumed from its committed offsets"
                if p.reset is None
                else f"found its offsets {'expired' if p.offsets_expired else 'out of range'}; "
                f"auto.offset.reset={p.reset}"
            )
            notes.append(
                f"{p.group} group back at {p.returned_s:g} s {how}, restarted at "
                f"{p.restarted_s:g} s: {p.replayed} applied events replayed, {p.skipped} skipped"
            )

    state = ext.get("sagas")
    if state is not None and state.counted:
        counted = state.counted
        update["saga_compensations"] = counted["saga_compensations"]
        update["sagas_to_human_queue"] = counted["sagas_to_human_queue"]
        update["duplicate_effects"] = m.duplicate_effects + counted["duplicate_effects"]
        notes.append(sagas_note(counted))

    if not update and not notes:
        return result
    metrics = m.model_copy(update=update)
    return result.model_copy(update={"metrics": metrics, "notes": [*result.notes, *notes]})
