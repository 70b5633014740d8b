"""What a run's task graph means for the closed forms: keys, spread, critical path, burstiness.

The estimate sees a run through :func:`simulator.fan_out.run_tasks` (expected counts per task) and
the design's partition key; the simulation builds the same run shape as a task graph
(``simulator.engine.taskgraph``). From them:

- :func:`task_work`: per task, its events in one consumer group (model calls, tool calls or state
  writes), the unit the partition key spreads;
- :func:`key_spread`: how a backlog of one group spreads over its partitions (events per key and
  their mean square), and :func:`partitions_per_run`: how many partitions one run touches, so how
  many runs a stalled partition stops;
- :func:`critical_path_s`: a run's latency if nothing queued (as the simulation's
  ``run_critical_path_s``, with mean step times);
- :func:`peakedness`: how bursty a run makes its model calls (the variance over the mean of the
  calls in flight if nothing queued): a run's researchers call at once;
- :func:`busiest_key_backlog`: for single-stage step events, the events of a window held by its
  busiest key, which its partition works off one at a time.
"""

from __future__ import annotations

from simulator.design import Design, PartitionKey
from simulator.estimate.recovery import Spread, distinct_partitions
from simulator.fan_out import RunTasks
from simulator.groups import GroupName
from simulator.producer import PRODUCE_TICK_S
from simulator.scenario import Load, Scenario

_KIND = {"agent": 0, "tool": 1, "state": 2}


def task_work(tasks: RunTasks, group: GroupName) -> list[float]:
    """Events of ``group`` per task of one run, tasks with none left out: the planner, writer
    and reviewer (``tasks.fixed``) and each researcher; one task for a single agent."""
    k = _KIND[group]
    out = [f[k] for f in tasks.fixed]
    whole = int(tasks.researchers)
    out.extend([tasks.per_researcher[k]] * whole)
    if tasks.researchers > whole:
        out.append(tasks.per_researcher[k] * (tasks.researchers - whole))
    return [x for x in out if x > 0]


def key_spread(design: Design, tasks: RunTasks, group: GroupName, deterministic: bool) -> Spread:
    """How one group's backlog spreads over ``event_log.partitions`` by the design's key.

    ``task_id``: a task's events share a key; ``run_id`` and ``tenant_id``: a run's (a tenant's
    several runs are taken as separate keys: the hot tenants are the simulation's to show);
    ``arrival_timestamp``: each event its own; ``event_id`` and deterministic scenarios: evenly
    (round robin). A salt of ``b`` buckets splits a key ``b`` ways."""
    partitions = design.event_log.partitions
    key = design.event_log.partition_key
    if deterministic or key is PartitionKey.event_id:
        return Spread(partitions, 1.0, 0.0)
    if key is PartitionKey.arrival_timestamp:
        return Spread(partitions, 1.0, 1.0)
    work = task_work(tasks, group)
    if key is not PartitionKey.task_id:
        work = [sum(work)] if work else []
    buckets = max(1, design.event_log.key_salt_buckets)
    work = [w / buckets for w in work for _ in range(buckets)]
    if not work:
        return Spread(partitions, 1.0, 0.0)
    mean = sum(work) / len(work)
    square = sum(w * w for w in work) / len(work)
    return Spread(partitions, mean, square)


def open_loop_spread(design: Design, events_per_run: float, deterministic: bool) -> Spread:
    """How an open-loop backlog spreads over the partitions: a run's ``events_per_run`` events
    of the group share a key under ``run_id``, ``task_id`` (an open-loop run has no tasks) and
    ``tenant_id``; each event its own under ``arrival_timestamp``; ``event_id`` and
    deterministic scenarios spread evenly (round robin)."""
    partitions = design.event_log.partitions
    key = design.event_log.partition_key
    if deterministic or key is PartitionKey.event_id or events_per_run <= 0:
        return Spread(partitions, 1.0, 0.0)
    if key is PartitionKey.arrival_timestamp:
        return Spread(partitions, 1.0, 1.0)
    k = events_per_run / max(1, design.event_log.key_salt_buckets)
    return Spread(partitions, k, k * k)


def partitions_per_run(design: Design, tasks: RunTasks, group: GroupName) -> float:
    """Partitions of ``group`` one run's events land on (expected): its keys hashed."""
    key = design.event_log.partition_key
    work = task_work(tasks, group)
    buckets = max(1, design.event_log.key_salt_buckets)
    if key in (PartitionKey.event_id, PartitionKey.arrival_timestamp):
        keys = sum(work)
    elif key is PartitionKey.task_id:
        keys = float(len(work)) * buckets
    else:
        keys = float(buckets if work else 0)
    return distinct_partitions(keys, design.event_log.partitions)


def busiest_key_backlog(design: Design, scenario: Scenario, arrived: float) -> float:
    """Of ``arrived`` consecutive step events of a single-stage load
    (``load.step_events_per_second``: ``K = max(1, round(rate x mean step))`` runs in flight taken
    in turn, each of ``fan_out.model_calls`` steps, ``simulator.engine.workload``), the expected
    events of the key holding most of them; 0 for another load or a key that spreads a run's
    events (``event_id``, ``arrival_timestamp``).

    Each of the ``K`` runs in flight gets ``b = arrived / K`` of them (divided again by the key's
    salt buckets). Up to a run's length ``n`` they are one stretch of that run's steps, which a
    run boundary at a uniform place splits into two keys with probability ``b / n``: the larger
    part is ``3b / 4`` on average then, so the busiest holds ``b (1 - b / 4n)``; beyond ``n``, a
    whole run (the spread over the partitions of many runs is :func:`open_loop_spread`'s). A key's
    events go to one partition, which starts them one after another: a window of a light load held
    by one run drains no faster than its events' steps in a row (the rewind scenario's 10-12
    events after 10 minutes at 0.02 events/s take about 20 s, not their 0.25 s share of the
    group's 96 slots).
    """
    load = scenario.load
    rate = load.step_events_per_second
    key = design.event_log.partition_key
    spread = key in (PartitionKey.event_id, PartitionKey.arrival_timestamp)
    if rate is None or arrived <= 0 or spread:
        return 0.0
    in_flight = max(1, round(rate * load.step_time.agent_step.mean_seconds))
    steps = max(1, load.fan_out.model_calls)
    share = arrived / in_flight / max(1, design.event_log.key_salt_buckets)
    if share >= steps:
        return float(steps)
    return share * (1.0 - share / (4.0 * steps))


def critical_path_s(design: Design, load: Load, tasks: RunTasks) -> float:
    """A run's latency if nothing queued, seconds, with mean step times: its planner, one
    researcher, its writer and its reviewer one after another (a single agent: its one task).
    A task alternates calls and the writes after them; each stage pays half the producer's tick
    and half the outbox relay's poll interval to reach the log (as the simulation's
    ``run_critical_path_s``)."""
    st = load.step_time
    hop = PRODUCE_TICK_S / 2.0
    if design.data_model.outbox:
        hop += design.data_model.outbox_relay_poll_interval_ms / 2000.0
    write_s = design.state_store.write_latency_ms / 1000.0

    def task_s(model: float, tool: float, writes: float) -> float:
        calls = model + tool
        write_stages = min(writes, calls) if calls else (1.0 if writes else 0.0)
        return (
            model * st.agent_step.mean_seconds
            + tool * st.tool_call.mean_seconds
            + write_stages * write_s
            + (calls + write_stages) * hop
        )

    if tasks.sequential or not tasks.fixed:
        return sum(task_s(*f) for f in tasks.fixed)
    planner, writer, reviewer = tasks.fixed[0], tasks.fixed[1], tasks.fixed[2]
    research = task_s(*tasks.per_researcher) if tasks.researchers > 0 else 0.0
    return task_s(*planner) + research + task_s(*writer) + task_s(*reviewer)


def peakedness(tasks: RunTasks) -> float:
    """Variance over mean of the model calls a Poisson stream of runs has in flight if nothing
    queued (1 for Poisson calls): each phase of a run makes ``k`` calls at once (the ``R``
    researchers together, every other role alone), and an infinite-server queue fed by such runs
    has ``sum(k x calls of the phase) / calls`` (Hayward's peakedness of the offered traffic):
    ``(calls of the roles alone + R^2 x calls of one researcher) / calls of the run``. The
    course's run (planner 2, writer 2, reviewer 1, five researchers of 3 calls): (5 + 25 x 3) /
    20 = 4.0; a single agent 1. Used as the arrivals' ``c_a^2`` at the model gateway
    (:func:`simulator.closed_forms.provider.gateway_wait`)."""
    fixed = sum(f[0] for f in tasks.fixed)
    r = tasks.researchers
    per = tasks.per_researcher[0]
    calls = fixed + r * per
    if calls <= 0:
        return 1.0
    if tasks.sequential:
        return 1.0
    return (fixed + r * r * per) / calls
