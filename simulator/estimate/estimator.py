"""The estimate of a design under a scenario: what the live panel shows while a learner types.

Pure arithmetic over the closed forms (:mod:`simulator.closed_forms`), the capacity rules the
simulation shares (:mod:`simulator.capacity`) and the workload a design produces
(:mod:`simulator.fan_out`); see :func:`estimate` for the rules.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Literal, NamedTuple

from simulator.capacity import busy_partitions, capacity_limits, smallest_limit
from simulator.closed_forms.drain import (
    backlog_per_partition,
    drain_seconds,
    little_in_flight,
    never_drains_note,
    utilisation,
)
from simulator.closed_forms.provider import (
    bucket_wait,
    burst_capacity,
    gateway_wait,
    relay_wave_wait,
    tokens_per_minute,
)
from simulator.closed_forms.queueing import kingman_wait, saturated, step_time_scv
from simulator.design import Acks, Design, ModelProvider, Replication
from simulator.estimate.figures import Estimate, GroupEstimate, ModelLoad
from simulator.estimate.held import RunWork
from simulator.estimate.outages import GroupUnderLoad, Outage, causal_window, outage_for
from simulator.estimate.recovery import Recovery, Spread, causal_recovery, partition_drain_s
from simulator.estimate.runs import (
    busiest_key_backlog,
    critical_path_s,
    key_spread,
    open_loop_spread,
    peakedness,
)
from simulator.fan_out import RunFanOut, RunTasks, fan_out_per_run, mean_arrivals_eps, run_tasks
from simulator.groups import GROUPS, GroupName
from simulator.placement import (
    block_reason,
    blocked_partitions,
    isr_shrunk_partitions,
    lag_gate,
)
from simulator.poison import PoisonStall, poison_stall_for_design
from simulator.scenario import BrokerLoss, FollowerLag, Load, Poison, Scenario, StateFailover


def estimate(
    design: Design, scenario: Scenario, *, recoveries: dict[GroupName, Recovery] | None = None
) -> Estimate:
    """Closed-form figures for ``design`` under ``scenario``: per consumer group arrivals,
    capacity, utilisation, in-flight events, per-partition wait, backlog after the scenario's
    outages and the time to drain it, the bottleneck and what limits it, and the model load.

    Workload rules:

    - ``load.step_events_per_second``: every step event goes to the agent group (one model call
      per agent step); the tool and state groups are idle.
    - ``load.runs_per_second`` r: agent arrivals r x model calls, tool r x tool calls, state
      r x state writes per run, after :func:`simulator.fan_out.fan_out_per_run`.
    - Each group reads its own topic of ``event_log.partitions`` partitions; events spread evenly
      (hot keys are the simulator's business).
    - Capacity ceilings: :func:`simulator.capacity.capacity_limits` (partitions or instances x
      concurrency over the step time; the agent group's provider limits; the tool runners; the
      state store's write capacity), the very rules the simulation applies.
    - Outages (the worst per group is kept): :mod:`simulator.estimate.outages`.

    The agent step time stands for a model call's latency when the provider's concurrency limit
    is applied. Deterministic scenarios (even arrivals, constant step times) have no queueing
    wait below saturation. Never raises for a valid design and scenario.

    ``recoveries``, when given, receives each group's causal recovery as the figures take it
    (:func:`simulator.estimate.recovery.causal_recovery`): the backlog left when the last
    fault ends, which the drain starts from, beside the largest (the figures' ``backlog``).
    """
    load = scenario.load
    arrivals, fan, runs = mean_arrivals_eps(design, load)
    groups = {name: _group_estimate(design, scenario, name, arrivals[name]) for name in GROUPS}
    tasks = run_tasks(design, load) if load.run_model == "causal" and runs else None
    if tasks is not None:
        _causal_recoveries(design, scenario, groups, tasks, recoveries)
    bottleneck: GroupName = "agent"
    for name in GROUPS:
        if groups[name].utilisation > groups[bottleneck].utilisation:
            bottleneck = name
    b = groups[bottleneck]
    at_risk, notes = _state_writes_at_risk(design, scenario, arrivals["state"])
    poison = _poison_stall(design, scenario, groups, notes)
    notes.extend(_workload_notes(design, scenario, fan))
    drain = _slowest_drain(groups)
    if poison is not None and poison.stall_seconds is None:
        # A poison event retried without a limit: its partition never drains (the simulation's
        # incident still on at the end of the window, simulator.engine.metrics.incidents).
        drain = _Drain(
            drain.group, drain.backlog, None, f"a poison event stalls for good: {poison.note}"
        )
    mode: Literal["runs", "step_events"] = "step_events" if fan is None else "runs"
    return Estimate(
        scenario=scenario.name,
        mode=mode,
        runs_per_second=runs,
        fan_out=fan,
        by_group=dict(groups),
        bottleneck=bottleneck,
        limiting_factor=b.limiting_factor,
        capacity_eps=b.capacity_eps,
        utilisation=b.utilisation,
        in_flight=sum(g.in_flight for g in groups.values()),
        model=_model_load(
            design,
            load,
            arrivals["agent"],
            groups["agent"].step_time_s,
            _bursts(scenario, tasks),
        ),
        backlog=drain.backlog,
        drain_group=drain.group,
        drain_seconds=drain.seconds,
        drain_note=drain.note,
        state_writes_at_risk=at_risk,
        poison=poison,
        notes=notes,
    )


def _step(load: Load, group: GroupName, deterministic: bool) -> tuple[float, float]:
    """The group's mean step time in seconds and its squared coefficient of variation."""
    st = {
        "agent": load.step_time.agent_step,
        "tool": load.step_time.tool_call,
        "state": load.step_time.state_write,
    }[group]
    return st.mean_seconds, 0.0 if deterministic else step_time_scv(st)


def _partition_wait(
    lam: float,
    rho: float,
    step: tuple[float, float],
    arrival_scv: float,
    busy: int,
    partitions: int,
) -> float | None:
    """Mean wait in one partition's queue in seconds; ``None`` when the group is saturated.

    ``step``: mean step time and its squared coefficient of variation. Per-partition queue:
    arrivals lambda / P, one event at a time at the step time; when fewer slots than partitions,
    partitions share the slots (service step x P / busy). Provider-side waits are reported
    separately (``ModelLoad``).
    """
    if lam <= 0:
        return 0.0
    if busy <= 0 or saturated(rho):
        return None
    step_s, service_scv = step
    eff_service = step_s * partitions / busy
    w = kingman_wait(lam / partitions, eff_service, arrival_scv, service_scv)
    return None if math.isinf(w) else w


def _bursts(scenario: Scenario, tasks: RunTasks | None) -> tuple[float, float]:
    """The model calls' arrival and call-time squared coefficients of variation at the gateway:
    a causal run's peakedness (:func:`simulator.estimate.runs.peakedness`) or Poisson calls (1),
    and the agent step's (lognormal 0.284 at sigma 0.5); both 0 in deterministic mode."""
    if scenario.deterministic:
        return 0.0, 0.0
    arrival = 1.0 if tasks is None else peakedness(tasks)
    return arrival, step_time_scv(scenario.load.step_time.agent_step)


def _causal_recoveries(
    design: Design,
    scenario: Scenario,
    groups: dict[GroupName, GroupEstimate],
    tasks: RunTasks,
    recoveries: dict[GroupName, Recovery] | None = None,
) -> None:
    """For causal runs, every group's backlog and drain after the scenario's faults by
    :mod:`simulator.estimate.recovery` (a fault anywhere stalls runs, so every group's work
    waits), in place of the per-group outage rule (whose kind, length, redeliveries and losses
    stay)."""
    load = scenario.load
    runs = RunWork(design, load, tasks)
    critical = critical_path_s(design, load, tasks)
    for name in GROUPS:
        g = groups[name]
        if g.arrivals_eps <= 0:
            continue
        tokens = load.tokens.input_per_call + load.tokens.output_per_call
        under = GroupUnderLoad(
            name,
            design.consumers.by_name(name),
            g.arrivals_eps,
            g.capacity_eps,
            g.step_time_s,
            tokens,
        )
        windows = [
            w
            for fault in scenario.faults
            for w in causal_window(fault, under, design, runs, scenario.faults)
        ]
        if not windows:
            continue
        partition_eps = (
            1.0 / g.step_time_s - g.arrivals_eps / g.partitions if g.step_time_s > 0 else 0.0
        )
        spread = key_spread(design, tasks, name, scenario.deterministic)
        rec = causal_recovery(
            windows, g.arrivals_eps, g.capacity_eps, critical, spread, partition_eps
        )
        g.backlog = rec.backlog_max
        g.backlog_per_partition = backlog_per_partition(rec.backlog_max, g.partitions)
        if g.drain_seconds is None and g.drain_note is not None and rec.drain_seconds is None:
            continue
        if recoveries is not None:
            recoveries[name] = rec
        g.drain_seconds = rec.drain_seconds
        g.drain_note = (
            never_drains_note(g.capacity_eps, g.arrivals_eps) if rec.drain_seconds is None else None
        )
        if g.outage is None:
            g.outage = "run stall"


def _relay_mean_s(design: Design) -> float:
    """The outbox relay's mean publish delay, seconds: half its poll interval (0 without one)."""
    model = design.data_model
    return model.outbox_relay_poll_interval_ms / 2000.0 if model.outbox else 0.0


def _group_estimate(
    design: Design, scenario: Scenario, name: GroupName, lam: float
) -> GroupEstimate:
    """One group's figures at mean arrivals ``lam`` events/s, after its worst outage."""
    load = scenario.load
    cg = design.consumers.by_name(name)
    tokens_per_call = load.tokens.input_per_call + load.tokens.output_per_call
    arrival_scv = 0.0 if scenario.deterministic or load.arrivals == "even" else 1.0
    step_s, service_scv = _step(load, name, scenario.deterministic)
    partitions = design.event_log.partitions
    limits = capacity_limits(design, name, step_s, tokens_per_call, provider=design.model.primary)
    cap, factor = smallest_limit(limits)
    rho = utilisation(lam, cap)
    in_flight = little_in_flight(lam, step_s)
    busy = busy_partitions(partitions, cg.instances, cg.concurrency_per_instance)
    wait = _partition_wait(lam, rho, (step_s, service_scv), arrival_scv, busy, partitions)
    g = GroupEstimate(
        group=name,
        arrivals_eps=lam,
        step_time_s=step_s,
        partitions=partitions,
        instances=cg.instances,
        concurrency_per_instance=cg.concurrency_per_instance,
        busy_partitions=busy,
        limits_eps=limits,
        capacity_eps=cap,
        limiting_factor=factor,
        utilisation=rho,
        in_flight=in_flight,
        partitions_needed=math.ceil(in_flight - 1e-9) if in_flight > 0 else 0,
        partition_wait_s=wait,
        # An event waits half the outbox relay's poll interval on average before it reaches
        # the log (simulator.engine.outbox), as in the simulation.
        latency_mean_s=None if wait is None else wait + step_s + _relay_mean_s(design),
        backlog_growth_eps=max(0.0, lam - cap),
    )
    if lam > 0 and saturated(rho):
        g.drain_seconds = None
        g.drain_note = never_drains_note(cap, lam)
    under_load = GroupUnderLoad(name, cg, lam, cap, step_s, tokens_per_call)
    outages = [outage_for(f, under_load, design, scenario.faults) for f in scenario.faults]
    worst = max((o for o in outages if o is not None), key=lambda o: o.backlog, default=None)
    if worst is not None:
        _apply_outage(g, worst, _open_loop_spread(design, scenario, name))
        # The window's arrivals held by one key drain one after another on its partition.
        fresh = min(worst.backlog, lam * worst.seconds)
        serial_s = busiest_key_backlog(design, scenario, fresh) * step_s
        if g.drain_seconds is not None and serial_s > g.drain_seconds:
            g.drain_seconds = serial_s
    return g


def _open_loop_spread(design: Design, scenario: Scenario, name: GroupName) -> Spread:
    """How an open-loop group's backlog spreads over its partitions (events per run by key)."""
    load = scenario.load
    if load.step_events_per_second is not None:
        per_run = float(load.fan_out.model_calls) if name == "agent" else 0.0
    else:
        fan = fan_out_per_run(design, load)
        per_run = {"agent": fan.model_calls, "tool": fan.tool_calls, "state": fan.state_writes}[
            name
        ]
    return open_loop_spread(design, per_run, scenario.deterministic)


def _apply_outage(g: GroupEstimate, worst: Outage, spread: Spread) -> None:
    """Record the group's worst outage on ``g``: its backlog and the time to drain it, the
    fluid drain or the busiest partitions' if later (:func:`simulator.estimate.recovery.
    partition_drain_s`: a run's events share a key)."""
    g.outage = worst.kind
    g.outage_seconds = worst.seconds
    g.backlog = worst.backlog
    g.backlog_per_partition = backlog_per_partition(worst.backlog, g.partitions)
    g.redelivered_max = worst.redelivered
    g.lost_max = worst.lost
    if g.drain_seconds is not None:  # not saturated before the fault either
        lam = g.arrivals_eps
        d = drain_seconds(worst.backlog, worst.capacity_after, lam)
        if d is not None and d > 0 and g.step_time_s > 0:
            per_partition = 1.0 / g.step_time_s - lam / g.partitions
            holding = dataclasses.replace(
                spread, partitions=max(1, round(worst.share * spread.partitions))
            )
            busiest = partition_drain_s(
                worst.backlog, holding, worst.capacity_after - lam, per_partition
            )
            if busiest > d * (1.0 + 1e-9):
                d = busiest
        g.drain_seconds = d
        g.drain_note = never_drains_note(worst.capacity_after, lam) if d is None else None


class _Drain(NamedTuple):
    """The group whose backlog takes longest to drain, that backlog, the time and the note."""

    group: GroupName | None
    backlog: float
    seconds: float | None
    note: str | None


def _slowest_drain(groups: dict[GroupName, GroupEstimate]) -> _Drain:
    """The group with a backlog (or none that drains) that drains last: never before the
    longest finite drain; the first in :data:`GROUPS` order wins a tie."""
    worst: tuple[int, float, GroupName] | None = None
    for name in GROUPS:
        g = groups[name]
        if g.backlog > 0 or g.drain_seconds is None:
            rank = (1 if g.drain_seconds is None else 0, g.drain_seconds or 0.0, name)
            if worst is None or rank[:2] > worst[:2]:
                worst = rank
    if worst is None:
        return _Drain(None, 0.0, 0.0, None)
    dg = groups[worst[2]]
    return _Drain(worst[2], dg.backlog, dg.drain_seconds, dg.drain_note)


def _model_load(
    design: Design,
    load: Load,
    model_eps: float,
    agent_step_s: float,
    bursts: tuple[float, float] = (1.0, 1.0),
) -> ModelLoad:
    """Model calls, requests and tokens a minute against the primary provider's limits, and the
    wait for the provider at ``model_eps`` calls a second.

    The wait is the simulation's model gateway (``simulator.engine.provider``), which meters calls
    to every limit it knows: a call beyond ``max_concurrency`` in flight waits for the first free
    slot (:func:`simulator.closed_forms.provider.gateway_wait`: Erlang C's M/M/c with
    ``c = max_concurrency``, Kleinrock 1975, sec. 3.5, scaled for bursts), 0 when the agent group
    can never have more calls in flight than the limit (busy partitions at most
    ``max_concurrency``); a call beyond the RPM or TPM bucket's room waits for it
    (:func:`simulator.closed_forms.provider.bucket_wait`, the tighter bucket), or, when an
    outbox relay publishes the calls in waves, for the bucket to admit the wave
    (:func:`simulator.closed_forms.provider.relay_wave_wait`, the larger). ``bursts``: the
    arrivals' and the calls' squared coefficients of variation (a causal run's researchers call
    at once: :func:`simulator.estimate.runs.peakedness`). ``None`` when the calls need the RPM,
    the TPM or the slots, or more.
    """
    primary = design.model.primary
    rpm_needed = model_eps * 60.0
    tpm_needed = tokens_per_minute(
        model_eps, load.tokens.input_per_call, load.tokens.output_per_call
    )
    conc_needed = model_eps * agent_step_s
    agent = design.consumers.agent
    callers = busy_partitions(
        design.event_log.partitions, agent.instances, agent.concurrency_per_instance
    )
    arrival_scv, service_scv = bursts
    p_wait, wait = gateway_wait(
        model_eps, agent_step_s, primary.max_concurrency, callers, arrival_scv, service_scv
    )
    tokens = load.tokens.input_per_call + load.tokens.output_per_call
    rates = _bucket_rates(primary, tokens)
    buckets = [bucket_wait(model_eps, rate, burst, arrival_scv) for rate, burst in rates]
    relay_s = 2.0 * _relay_mean_s(design)
    waves = [
        relay_wave_wait(model_eps, relay_s, callers, rate, burst, arrival_scv)
        for rate, burst in rates
    ]
    if wait is not None and all(b is not None for b in buckets):
        wait += max(max(b for b in buckets if b is not None), *waves)
    if saturated(rpm_needed / primary.rpm) or saturated(tpm_needed / primary.tpm):
        wait = None
    return ModelLoad(
        model_calls_per_second=model_eps,
        requests_per_minute=rpm_needed,
        rpm_limit=primary.rpm,
        rpm_utilisation=rpm_needed / primary.rpm,
        input_tokens_per_minute=model_eps * load.tokens.input_per_call * 60.0,
        output_tokens_per_minute=model_eps * load.tokens.output_per_call * 60.0,
        tokens_per_minute=tpm_needed,
        tpm_limit=primary.tpm,
        tpm_utilisation=tpm_needed / primary.tpm,
        concurrency_needed=conc_needed,
        max_concurrency=primary.max_concurrency,
        wait_probability=p_wait,
        wait_s=wait,
    )


def _bucket_rates(primary: ModelProvider, tokens: int) -> list[tuple[float, float]]:
    """The RPM bucket's and (for calls with tokens) the TPM bucket's refill rate and capacity, in
    calls a second and calls."""
    rates = [(primary.rpm / 60.0, burst_capacity(primary.rpm, 1))]
    if tokens > 0:
        rates.append((primary.tpm / 60.0 / tokens, burst_capacity(primary.tpm, tokens) / tokens))
    return rates


def _state_writes_at_risk(
    design: Design, scenario: Scenario, state_eps: float
) -> tuple[float, list[str]]:
    """Acknowledged state writes inside the async replication lag at a failover, and the note
    saying whether they are rebuilt from the log or lost (0 and no note otherwise)."""
    failover = any(isinstance(f, StateFailover) for f in scenario.faults)
    if not failover or design.state_store.replication is not Replication.async_:
        return 0.0, []
    lag_ms = design.state_store.replication_lag_ms
    at_risk = state_eps * lag_ms / 1000.0
    model = design.data_model
    rebuilt = (  # as simulator.faults.failover: a log updated in place has nothing to replay
        "rebuilt from the event log"
        if model.state_rebuildable_from_log and model.append_only_event_log
        else "lost"
    )
    note = (
        f"Async replication: about {at_risk:.4g} acknowledged state writes inside the "
        f"{lag_ms:g} ms lag window are {rebuilt} at failover."
    )
    return at_risk, [note]


def _poison_stall(
    design: Design,
    scenario: Scenario,
    groups: dict[GroupName, GroupEstimate],
    notes: list[str],
) -> PoisonStall | None:
    """The stall of the scenario's first poison fault in its group (its note added to
    ``notes``), or ``None`` without one."""
    for fault in scenario.faults:
        if isinstance(fault, Poison):
            pg = groups[fault.group]
            poison = poison_stall_for_design(design.failures, pg.arrivals_eps, pg.partitions)
            notes.append(f"Poison messages in the {fault.group} group: {poison.note}")
            return poison
    return None


def _workload_notes(design: Design, scenario: Scenario, fan: RunFanOut | None) -> list[str]:
    """Notes on what the estimate leaves out and on where the step events go."""
    lagging = [f for f in scenario.faults if isinstance(f, FollowerLag)]
    notes = [_follower_lag_note(design, f, scenario.faults) for f in lagging]
    notes += [
        _broker_loss_note(design, f, lagging) for f in scenario.faults if isinstance(f, BrokerLoss)
    ]
    if fan is None:
        notes.append("Step events go straight to the agent group; tool and state groups are idle.")
    else:
        notes.append(f"Fan-out per run: {fan.note}.")
    return notes


def _follower_lag_note(design: Design, fault: FollowerLag, faults: Sequence[object]) -> str:
    """What a follower lag does in the estimate: the partitions whose ISR shrinks to the leader
    alone, and how long their acks=all producers wait (for the shrink, or refused below
    min.insync.replicas until it regrows); with min.insync.replicas 1 (or acks 0 or 1) their
    leader acknowledges writes alone, which the estimate does not count as lost."""
    log = design.event_log
    shrunk = isr_shrunk_partitions(design, fault)
    start = fault.at_seconds
    if not shrunk:
        return (
            f"Followers behind from {start:g} s: no partition's ISR shrinks to its leader alone "
            f"(replication factor {log.replication_factor}, or the lag ends within "
            f"replica.lag.time.max.ms)."
        )
    losses = [f for f in faults if isinstance(f, BrokerLoss)]
    gates = [lag_gate(design, p, fault, losses) for p in range(log.partitions)]
    until, refused = max(gates)
    head = (
        f"Followers behind from {start:g} s: the ISR of {shrunk} of {log.partitions} partitions "
        f"of each topic shrinks to the leader alone at "
        f"{start + fault.replica_lag_time_max_ms / 1000.0:g} s"
    )
    if refused:
        return (
            f"{head}; below min.insync.replicas {log.min_insync_replicas} they refuse writes "
            f"until {until:g} s, so nothing is acknowledged by the leader alone."
        )
    return (
        f"{head}; with acks={log.acks.value} and min.insync.replicas "
        f"{log.min_insync_replicas} their leader goes on acknowledging writes alone, and a loss "
        "of it takes the ones it had not flushed: the simulation counts them."
    )


def _broker_loss_note(
    design: Design, fault: BrokerLoss, lagging: Sequence[FollowerLag] = ()
) -> str:
    """What a broker loss does in the estimate: the partitions that refuse writes and why (their
    runs wait, :func:`simulator.estimate.outages.causal_window`), or that none does; the
    acknowledged writes a loss takes are the simulation's to count."""
    log = design.event_log
    blocked = blocked_partitions(design, fault, lagging)
    lost = (
        ""
        if log.acks is Acks.all
        else (
            f" With acks={log.acks.value}, writes a lost leader acknowledged alone are gone: the "
            "simulation counts them."
        )
    )
    if blocked:
        return (
            f"Broker loss: {blocked} of {log.partitions} partitions of each topic refuse writes "
            f"for {fault.duration_seconds:g} s ({block_reason(design, fault, lagging)}); their "
            "producers hold the events and the runs behind them wait until the brokers return."
            f"{lost}"
        )
    kept = (
        f"min.insync.replicas ({log.min_insync_replicas}) of its replicas in sync"
        if log.acks is Acks.all
        else "a replica to lead it"
    )
    return (
        f"Broker loss: every partition keeps {kept} with {fault.brokers} of {log.brokers} brokers "
        f"lost (replication factor {log.replication_factor}): no producer blocks.{lost}"
    )
