"""The simulation engine: one SimPy environment and seeded generators per run, driving the groups.

The **control plane** runs on SimPy: auto-commit ticks here, and the processes the fault layers
start (a worker crash, its session-timeout detection and restart, the slow-batch watchdog, ...).
Each control event first advances the **data plane** (``simulator.engine.consumers.ConsumerGroup.
advance``) to its own time, which processes the step events due by then in time order, and then
acts. Step events themselves are never SimPy events: that keeps the cost per step event at a few
arithmetic operations (see benchmarks/simulator.py). The samples (backlog every
``duration / 2400`` s, lag and steps in flight every ``duration / 300`` s) are taken by the data
plane as it passes their times (``simulator.engine.samples``), so they cost no SimPy event and do
not depend on how often the control plane advances the groups.

Randomness: ``numpy.random.SeedSequence(seed)`` spawns one child for the workload (a numpy
``Generator``, PCG64), one per consumer group for retry jitter and one for the phase of the
outbox relay's polls (each a ``random.Random``). Nothing uses a module-level RNG, Python's
``hash`` or set order, so the same design, scenario, seed and ``SIMULATOR_VERSION`` give
byte-identical result JSON in any process.

The engine simulates no fault by itself and imports none: ``simulator.simulation`` assembles a
simulation (this engine plus the fault layers of ``simulator.faults``, plugged in through
``simulator.engine.hooks``) and runs it in phases: :meth:`Simulation.start`, the faults' processes,
:meth:`Simulation.run_to_end`, the layers' finish, :meth:`Simulation.result`, their contributions.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Generator, Iterable
from typing import Any

import numpy as np
import simpy

from simulator.capacity import capacity_limits, smallest_limit
from simulator.design import CommitMode, Design, PartitionKey
from simulator.engine.causal import CausalRuns
from simulator.engine.consumers import ConsumerGroup
from simulator.engine.eventlog import Topic, build_topic, causal_topic, graph_partitions, key_codes
from simulator.engine.group import Stage
from simulator.engine.metrics import (
    UTILISATION_CAP,
    above_normal_peak,
    bin_counts,
    censored_latencies,
    drain,
    incidents,
    percentiles,
    sig,
)
from simulator.engine.outbox import outbox_relay
from simulator.engine.partition import Partition
from simulator.engine.provider import Provider
from simulator.engine.run_figures import run_figures
from simulator.engine.statestore import StateStore, latency_scale
from simulator.engine.taskgraph import TaskGraph, due_times
from simulator.engine.tools import RunnerPool
from simulator.engine.workload import Workload
from simulator.groups import GROUPS
from simulator.poison import backoffs_for_policy
from simulator.result import FaultWindow, GroupMetrics, Metrics, SimulationResult, Timeseries
from simulator.scenario import Scenario
from simulator.stages import KIND_STATE
from simulator.version import SIMULATOR_VERSION

CHART_SAMPLES = 300
"""Time-series points returned for charts."""
FINE_PER_CHART = 8
"""Lag samples per chart point (drain time and lag peaks are read from the finer samples)."""
MAX_AUTO_COMMIT_TICKS = 20_000
"""Auto-commit ticks per group at most; a shorter interval is simulated at duration / this."""
OUTBOX_RELAY = "outbox_relay"
"""Key of the outbox relay's generator (the phase of its polls) in :func:`make_rngs`' dict."""
FAULT_DRAWS = "fault_draws"
"""Key of the generator fault layers draw from when their draws must leave every other stream as
it was (``Simulation.fault_rng``; the flaky events of ``simulator.faults.flaky``)."""


class Simulation:
    """One simulation: the SimPy ``env``, the consumer groups, their stages, and the samples.

    ``env``: a fresh ``simpy.Environment``. ``rngs``: :func:`make_rngs`' dict (a ``random.Random``
    per group for jitter, the outbox relay's, and ``fault_rng``, the fault layers'). Build it,
    plug fault layers in (``simulator.simulation``), then :meth:`start`, start the faults'
    processes, :meth:`run_to_end` and :meth:`result`.
    """

    def __init__(
        self,
        env: simpy.Environment,
        design: Design,
        scenario: Scenario,
        workload: Workload,
        rngs: dict[str, random.Random],
    ):
        self.env = env
        self.fault_rng = rngs[FAULT_DRAWS]
        self.design = design
        self.scenario = scenario
        self.workload = workload
        self.duration = workload.duration_s
        self.chart_dt = self.duration / CHART_SAMPLES
        self.fine_dt = self.chart_dt / FINE_PER_CHART
        self.notes: list[str] = list(workload.notes)
        self.fault_windows: list[FaultWindow] = []
        self.topics: dict[str, Topic] = {}
        self.groups: dict[str, ConsumerGroup] = {}

        # The simulation's own view of the workload: the caller's arrays are never modified (an
        # explicit workload may be simulated again under another design).
        store = design.state_store
        state_load = workload.groups["state"]
        scale = latency_scale(store, state_load.mean_step_s)
        scaled = dataclasses.replace(
            state_load,
            step_s=state_load.step_s * scale,
            mean_step_s=store.write_latency_ms / 1000.0,
        )
        graph = workload.graph
        if graph is not None:
            steps = graph.step_s.copy()
            steps[graph.kind == KIND_STATE] *= scale
            graph = dataclasses.replace(graph, step_s=steps)
        workload = dataclasses.replace(
            workload, groups={**workload.groups, "state": scaled}, graph=graph
        )
        self.workload = workload
        self.graph = graph
        # Step events reach the log through the design's outbox relay, if any (engine/outbox.py).
        relay = outbox_relay(design, scenario.deterministic, rngs[OUTBOX_RELAY])
        for name in GROUPS:
            self.topics[name] = build_topic(design, workload.groups[name], relay)

        config = design.consumers
        agent_cfg = config.agent
        busy_able = min(
            design.event_log.partitions,
            agent_cfg.instances * agent_cfg.concurrency_per_instance,
        )
        # The in-flight heap is needed only when the limit can bind: more partitions can call at
        # once than the limit allows, or a crash leaves calls running without a consumer.
        crashes = any(f.kind == "worker_crash" and f.group == "agent" for f in scenario.faults)
        reach = 2 * busy_able if crashes else busy_able
        self.provider = Provider(
            design.model.primary,
            workload.tokens_per_call,
            track_concurrency=design.model.primary.max_concurrency < reach,
        )
        self.runners = RunnerPool(design.tools)
        self.store = StateStore(store)
        stages: dict[str, Stage] = {
            "agent": self.provider,
            "tool": self.runners,
            "state": self.store,
        }
        for name in GROUPS:
            cfg = getattr(config, name)
            self.groups[name] = ConsumerGroup(
                name,
                design,
                cfg,
                self.topics[name],
                stages[name],
                rngs[name],
                retry_policy=design.model.retry if name == "agent" else design.failures.retry,
                bin_s=self.chart_dt,
                bins=CHART_SAMPLES,
                is_agent=name == "agent",
            )
        n_fine = CHART_SAMPLES * FINE_PER_CHART
        self.fine_t = np.arange(1, n_fine + 1, dtype=np.float64) * self.fine_dt
        chart_t = self.fine_t[FINE_PER_CHART - 1 :: FINE_PER_CHART]
        for name in GROUPS:
            topic = self.topics[name]
            if graph is None:
                topic.precompute_log_ends(chart_t)
                ends: np.ndarray | None = topic.log_end_grid()
            else:
                ends = None
            self.groups[name].set_samples(self.fine_t, FINE_PER_CHART, ends)
        self.world: CausalRuns | None = None
        self.event_keys = np.empty(0, dtype=np.uint64)
        # Per group, the sorted times its events are due (the log's arrivals, or for causal runs
        # when each event would be produced if nothing queued): the backlog counts from them.
        self.due_sorted: dict[str, np.ndarray] = {}
        self.due_s = np.empty(0, dtype=np.float64)
        if graph is not None:
            self.due_s = due_times(graph)
            for kind, name in enumerate(GROUPS):
                self.due_sorted[name] = np.sort(self.due_s[graph.kind == kind])
            self.event_keys = self._graph_keys(graph)
            timestamp = design.event_log.partition_key is PartitionKey.arrival_timestamp
            self.world = CausalRuns(
                graph,
                [self.groups[name] for name in GROUPS],
                graph_partitions(design, graph),
                design.event_log.partitions,
                timestamp,
                relay,
            )
            for name in GROUPS:
                self.groups[name].world = self.world
        self._first: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        # Filled from the groups' samples when the run ends (_collect_samples).
        self.fine_backlog: dict[str, np.ndarray] = {}
        self.fine_due: dict[str, np.ndarray] = {}
        self.chart_lag: dict[str, np.ndarray] = {}
        self.chart_busy: dict[str, np.ndarray] = {}
        self.chart_worst = np.zeros(CHART_SAMPLES, dtype=np.int64)
        self.agent_partition_max = np.zeros(design.event_log.partitions, dtype=np.int64)

    # ------------------------------------------------------------------ processes

    def advance(self, t: float, names: Iterable[str] = GROUPS) -> None:
        """Bring the data plane of the named groups up to ``t`` seconds (every group, for a
        causal run: their logs grow from one another)."""
        if self.world is not None:
            self.world.advance(t)
            return
        for name in names:
            self.groups[name].advance(t)

    def _graph_keys(self, graph: TaskGraph) -> np.ndarray:
        """The key code of every event of a causal run graph (shape ``(E,)`` uint64; for a
        timestamp key, the run's: the append time decides the partition)."""
        keys = np.zeros(graph.events, dtype=np.uint64)
        for kind, name in enumerate(GROUPS):
            rows = graph.kind == kind
            load = dataclasses.replace(
                self.workload.groups[name],
                run=graph.run[rows],
                tenant=graph.tenant[rows],
                task=graph.task[rows],
                arrival_s=np.zeros(int(rows.sum())),
                step_s=np.zeros(int(rows.sum())),
            )
            keys[rows] = key_codes(self.design, load)
        return keys

    def partition_keys(self, name: str, part: Partition) -> np.ndarray:
        """The key code of every offset of ``part`` in group ``name``'s log so far (shape
        ``(n,)`` uint64)."""
        if self.world is not None:
            return self.event_keys[np.asarray(part.ev, dtype=np.int64)]
        topic = self.topics[name]
        lo = int(topic.start[part.pid])
        return topic.key[lo : lo + part.n]

    def log_end(self, name: str, t: float) -> int:
        """Events of group ``name`` in its log by ``t`` seconds (for a causal run, appended so
        far: the group must have been advanced to ``t``)."""
        if self.world is not None:
            return self.world.log_end(self.groups[name])
        return self.topics[name].log_end(t)

    def due(self, name: str, t: float) -> int:
        """Events of group ``name`` due by ``t`` seconds: arrived in its log, or for causal runs
        due by their runs' graphs whether produced or not (:func:`due_times`; after the run,
        without the unproduced steps of runs that stalled for good)."""
        if self.world is not None:
            return int(np.searchsorted(self.due_sorted[name], t, side="right"))
        return self.topics[name].log_end(t)

    def _auto_commit(
        self, group: ConsumerGroup, interval_s: float
    ) -> Generator[simpy.Event, Any, None]:
        env = self.env
        k = 1
        while k * interval_s <= self.duration:
            t = k * interval_s
            if t > env.now:
                yield env.timeout(t - env.now)
            group.advance(t)
            group.auto_commit(t)
            k += 1

    def release(self) -> None:
        """Drop the per-event state (partitions, topics, workload) once the result is out.

        A finished simulation sits in reference cycles (SimPy processes, hook closures) that only
        a full garbage collection frees; releasing its arrays at once keeps back-to-back runs
        within one run's memory."""
        for group in self.groups.values():
            group.release()
        for topic in self.topics.values():
            topic.release()
        self.groups = {}
        self.topics = {}
        self._first = {}
        self.workload.groups = {}

    def start(self) -> None:
        """Form every group at time 0 and, with auto commits, start their ticks."""
        env = self.env
        for g in self.groups.values():
            g.start(0.0)
        if self.design.delivery.commit is CommitMode.auto:
            interval = self.design.delivery.auto_commit_interval_ms / 1000.0
            floor = self.duration / MAX_AUTO_COMMIT_TICKS
            if interval < floor:
                self.notes.append(
                    f"auto-commit every {interval:g} s simulated as every {floor:g} s"
                )
                interval = floor
            for g in self.groups.values():
                env.process(self._auto_commit(g, interval))

    def run_to_end(self) -> None:
        """Run every control event up to the last sample time, that one included (the data
        plane takes its own samples on the way: simulator.engine.samples), bring every group to
        the end of the window, and collect the samples."""
        last = float(self.fine_t[-1])
        self.env.run(until=math.nextafter(last, math.inf))
        self.advance(max(last, self.duration))
        if self.world is not None and self.graph is not None:
            written = np.frombuffer(self.world.stage_written_s, dtype=np.float64)
            for name in GROUPS:
                self.topics[name] = causal_topic(
                    name,
                    self.design.event_log.partitions,
                    self.groups[name].parts,
                    self.graph,
                    written,
                    self.event_keys,
                )
            self._drop_stalled_due()
        self._collect_samples()

    def _drop_stalled_due(self) -> None:
        """Take out of ``due_sorted`` the steps that will never be produced: the unproduced
        events of runs one of whose events was given up (lost, dropped, dead-lettered, parked) or
        whose next events' publish was lost (``CausalRuns.unpublished``).
        Such a run stalled for good; its lost step is counted in ``lost`` or ``dead_lettered``,
        not as a backlog that never drains."""
        graph, world = self.graph, self.world
        assert graph is not None and world is not None
        stalled = np.zeros(graph.runs, dtype=bool)
        for name in GROUPS:
            topic = self.topics[name]
            if topic.event is None or topic.event.size == 0:
                continue
            gone = self.groups[name].settled() & np.isnan(self.first_times(name)[1])
            stalled[graph.run[topic.event[gone]]] = True
        for stage in world.unpublished:
            stalled[graph.stage_run[stage]] = True
        if not stalled.any():
            return
        written = np.frombuffer(world.stage_written_s, dtype=np.float64)
        never = np.isnan(written[graph.stage]) & stalled[graph.run]
        for kind, name in enumerate(GROUPS):
            keep = (graph.kind == kind) & ~never
            self.due_sorted[name] = np.sort(self.due_s[keep])

    def _collect_samples(self) -> None:
        """Backlog per fine time and lag, steps in flight, worst partition per chart time, from
        the samples the groups took (``fine_backlog``: events in the log not started;
        ``fine_due``: events due not started, the same for open-loop runs; ``chart_lag``,
        ``chart_busy``, ``chart_worst``, ``agent_partition_max``)."""
        worst = np.zeros(CHART_SAMPLES, dtype=np.int64)
        for name in GROUPS:
            group = self.groups[name]
            group.finish_samples()
            samples = group.samples
            assert samples is not None
            topic = self.topics[name]
            ends = np.searchsorted(topic.arrival_sorted_s, self.fine_t, side="right")
            done = np.frombuffer(samples.started_or_gone, dtype=np.int64)
            self.fine_backlog[name] = ends - done
            due = self.due_sorted.get(name)
            if due is None:
                self.fine_due[name] = self.fine_backlog[name]
            else:
                self.fine_due[name] = np.searchsorted(due, self.fine_t, side="right") - done
            self.chart_lag[name] = samples.lag_total
            self.chart_busy[name] = samples.in_flight
            if topic.arrival_s.size:
                np.maximum(worst, samples.lag_worst, out=worst)
        self.chart_worst = worst
        agent = self.groups["agent"].samples
        assert agent is not None
        self.agent_partition_max = agent.partition_lag_max

    # ------------------------------------------------------------------ result

    def _group_figures(
        self, name: str
    ) -> tuple[GroupMetrics, np.ndarray, np.ndarray, np.ndarray, float, float]:
        """The group's metrics; the latencies of its finished events, their waits and the
        censored latencies of its events still waiting at the end (seconds, each shape ``(k,)``);
        its capacity and offered load (events/s)."""
        g = self.groups[name]
        topic = self.topics[name]
        load = self.workload.groups[name]
        starts, finishes = self.first_times(name)
        done = finishes <= self.duration
        arrivals = topic.arrival_s
        # Latency runs from the event's write (its outbox row), wait from its arrival in the log.
        latency = finishes[done] - topic.written_s[done]
        wait = starts[done] - arrivals[done]
        censored = censored_latencies(
            arrivals, finishes, self.groups[name].settled(), self.duration
        )
        steps = topic.step_s[done]
        mean_step = float(steps.mean()) if steps.size else load.mean_step_s
        limits = capacity_limits(self.design, name, mean_step, self.workload.tokens_per_call)
        capacity = float(smallest_limit(limits)[0])
        offered = load.offered_eps
        if capacity > 0:
            utilisation = offered / capacity
        else:
            utilisation = 0.0 if offered == 0 else UTILISATION_CAP
        p95 = percentiles(np.concatenate([latency, censored]), [95])[0]
        metrics = GroupMetrics(
            arrivals=int(arrivals.size),
            processed=int(done.sum()),
            capacity_eps=sig(capacity),
            utilisation=sig(min(utilisation, UTILISATION_CAP)),
            lag_total_max=int(self.chart_lag[name].max()),
            busy_partitions_max=max(g.busy_max, int(self.chart_busy[name].max())),
            instances_alive_min=g.alive_min,
            mean_step_s=sig(mean_step),
            latency_mean_s=sig(float(latency.mean())) if latency.size else 0.0,
            latency_p95_s=sig(p95),
            latency_censored=int(censored.size),
            wait_mean_s=sig(float(wait.mean())) if wait.size else 0.0,
            rebalance_paused_partition_s=sig(g.rebalance_paused_s),
            poll_records_max=g.poll_records_max,
            poll_batch_max_s=sig(g.poll_batch_max_s),
            limits_utilisation={
                str(k): sig(min(offered / v, UTILISATION_CAP) if v > 0 else UTILISATION_CAP)
                for k, v in limits.items()
                if offered > 0
            },
        )
        return metrics, latency, wait, censored, capacity, offered

    def _backlog_at(self, times: np.ndarray) -> np.ndarray:
        """The total backlog of the log (events arrived and not started, every group) at
        ``times`` (shape ``(m,)``, within the window): arrivals and first starts counted exactly,
        events given up without a start as of the fine sample before each time."""
        out = np.zeros(times.size, dtype=np.int64)
        idx = np.clip(np.searchsorted(self.fine_t, times, side="right") - 1, 0, None)
        for name in GROUPS:
            topic = self.topics[name]
            starts = self.first_times(name)[0]
            started = np.sort(starts[~np.isnan(starts)])
            arrived = np.searchsorted(topic.arrival_sorted_s, times, side="right")
            begun = np.searchsorted(started, times, side="right")
            samples = self.groups[name].samples
            assert samples is not None
            sog = np.frombuffer(samples.started_or_gone, dtype=np.int64)
            at_fine = np.searchsorted(started, self.fine_t, side="right")
            gone = np.maximum(0, sog - at_fine)[idx] if sog.size else np.zeros_like(idx)
            out += arrived - begun - gone
        return out

    def first_times(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """First start and first finish of every event of group ``name`` (cached)."""
        if name not in self._first:
            self._first[name] = self.groups[name].first_times()
        return self._first[name]

    def result(self) -> SimulationResult:
        """The engine's result of the run (after :meth:`run_to_end`): metrics, time series,
        fault windows and notes; seed 0 (the caller sets it)."""
        groups = self.groups
        by_group: dict[str, GroupMetrics] = {}
        latencies: list[np.ndarray] = []
        censored: list[np.ndarray] = []
        waits: list[np.ndarray] = []
        finishes_all: list[np.ndarray] = []
        bottleneck: tuple[float, float, float] | None = None  # (utilisation, capacity, offered)
        for name in GROUPS:
            gm, latency, wait, waiting, capacity, offered = self._group_figures(name)
            if gm.arrivals or offered > 0 or name == "agent":
                by_group[name] = gm
            latencies.append(latency)
            censored.append(waiting)
            waits.append(wait)
            finishes_all.append(self.first_times(name)[1])
            if offered > 0:
                util = offered / capacity if capacity > 0 else UTILISATION_CAP
                if bottleneck is None or util > bottleneck[0]:
                    bottleneck = (util, capacity, offered)
        if bottleneck is None:
            agent = by_group["agent"]
            bottleneck = (0.0, agent.capacity_eps, 0.0)
        latency_all = np.concatenate(latencies)
        censored_all = np.concatenate(censored)
        wait_all = np.concatenate(waits)
        p50, p95, p99 = percentiles(np.concatenate([latency_all, censored_all]), [50, 95, 99])

        lag_total = np.sum([self.chart_lag[n] for n in GROUPS], axis=0)
        backlog = np.sum([self.fine_backlog[n] for n in GROUPS], axis=0)
        busy = np.sum([self.chart_busy[n] for n in GROUPS], axis=0)
        forever = backoffs_for_policy(self.design.failures.retry) is None
        inc = incidents(
            [(w.start_s, w.end_s, w.kind) for w in self.fault_windows], self.duration, forever
        )
        windows = inc.windows
        d = drain(
            self.fine_t,
            backlog,
            windows,
            bottleneck[1],
            bottleneck[2],
            inc.kinds,
            self._backlog_at,
            inc.steady,
        )
        due_total = np.sum([self.fine_due[n] for n in GROUPS], axis=0)
        for group_name, gm in by_group.items():
            gm.backlog_peak = above_normal_peak(self.fine_t, self.fine_due[group_name], windows)

        arrivals = sum(int(self.topics[n].arrival_s.size) for n in GROUPS)
        processed = sum(gm.processed for gm in by_group.values())
        tokens_per_call = self.workload.tokens_per_call
        agent_g = groups["agent"]
        total = _Totals(groups.values())
        metrics = Metrics(
            arrivals=arrivals,
            processed=processed,
            throughput_eps=sig(processed / self.duration),
            capacity_eps=sig(bottleneck[1]),
            utilisation=sig(min(bottleneck[0], UTILISATION_CAP)),
            lag_total_max=int(lag_total.max()) if lag_total.size else 0,
            backlog_peak=above_normal_peak(self.fine_t, due_total, windows),
            drain_seconds=None if d.drain_seconds is None else sig(d.drain_seconds),
            drain_note=d.note,
            latency_p50_s=sig(p50),
            latency_p95_s=sig(p95),
            latency_p99_s=sig(p99),
            latency_censored=int(censored_all.size),
            in_flight_mean=sig(float(busy.mean())),
            publish_delay_mean_s=self._publish_delay_mean_s(),
            latency_mean_s=sig(float(latency_all.mean())) if latency_all.size else 0.0,
            wait_mean_s=sig(float(wait_all.mean())) if wait_all.size else 0.0,
            dedupe_skipped=total.dedupe_skipped,
            dedupe_records_expired=sum(g.dedupe_expired for g in groups.values()),
            cache_hits=agent_g.cache_hits,
            redelivered=total.redelivered,
            reprocessing_rate=sig(total.redelivered / max(1, processed + total.redelivered)),
            duplicate_effects=total.duplicate_effects,
            lost=total.lost,
            dead_lettered=total.dead_lettered,
            rebalances=total.rebalances,
            model_calls=agent_g.model_calls,
            model_calls_repeated=agent_g.model_calls_repeated,
            tokens=agent_g.model_calls * tokens_per_call,
            tokens_repeated=agent_g.model_calls_repeated * tokens_per_call,
            http_429s=agent_g.http_429s,
            by_group=by_group,
        )
        if self.world is not None and self.graph is not None:
            figures = run_figures(
                self.world,
                self.graph,
                self.topics,
                lambda name: self.first_times(name)[1],
                self.duration,
                self.workload.tokens_per_call,
            )
            metrics = metrics.model_copy(update=figures)
        timeseries = self._timeseries(lag_total, busy, np.concatenate(finishes_all))
        return SimulationResult(
            simulator_version=SIMULATOR_VERSION,
            scenario=self.scenario.name,
            seed=0,
            duration_seconds=self.duration,
            metrics=metrics,
            timeseries=timeseries,
            fault_windows=list(self.fault_windows),
            notes=list(self.notes),
        )

    def _publish_delay_mean_s(self) -> float:
        """Mean seconds from an event's write to its arrival in the log, over every group's
        events (the outbox relay's poll, and for causal runs the producer's tick)."""
        delays = [self.topics[n].arrival_s - self.topics[n].written_s for n in GROUPS]
        joined = np.concatenate(delays) if delays else np.empty(0)
        return sig(float(joined.mean())) if joined.size else 0.0

    def _timeseries(
        self, lag_total: np.ndarray, busy: np.ndarray, finishes: np.ndarray
    ) -> Timeseries:
        dt = self.chart_dt
        arrivals = np.concatenate([self.topics[n].arrival_s for n in GROUPS])
        arr_counts = bin_counts(arrivals, dt, CHART_SAMPLES)
        done_counts = bin_counts(finishes, dt, CHART_SAMPLES)
        errors = np.zeros(CHART_SAMPLES, dtype=np.int64)
        for g in self.groups.values():
            errors += np.asarray(g.errors[:CHART_SAMPLES], dtype=np.int64)
        t_s = self.fine_t[FINE_PER_CHART - 1 :: FINE_PER_CHART]
        return Timeseries(
            interval_seconds=sig(dt),
            t_s=[sig(float(x)) for x in t_s],
            lag_total=[int(x) for x in lag_total],
            lag_worst_partition=[int(x) for x in self.chart_worst],
            arrivals_eps=[sig(float(x) / dt, 5) for x in arr_counts],
            throughput_eps=[sig(float(x) / dt, 5) for x in done_counts],
            in_flight=[int(x) for x in busy],
            errors=[int(x) for x in errors],
            partition_lag_max=[int(x) for x in self.agent_partition_max],
        )


class _Totals:
    """Counters summed over the consumer groups."""

    def __init__(self, groups: Iterable[ConsumerGroup]):
        gs = list(groups)
        self.redelivered = sum(g.redelivered for g in gs)
        self.duplicate_effects = sum(g.duplicate_effects for g in gs)
        self.dedupe_skipped = sum(g.dedupe_skipped for g in gs)
        self.lost = sum(g.lost for g in gs)
        self.dead_lettered = sum(g.dead_lettered for g in gs)
        self.rebalances = sum(g.rebalances for g in gs)


def make_rngs(seed: int) -> tuple[np.random.Generator, dict[str, random.Random]]:
    """The workload's numpy generator and a ``random.Random`` per group, for the outbox relay
    (key :data:`OUTBOX_RELAY`) and for the fault layers' own draws (:data:`FAULT_DRAWS`), all from
    ``seed``. Children are spawned in that order and a new one is added at the end, so the
    others are the same children as before it existed."""
    children = np.random.SeedSequence(seed).spawn(3 + len(GROUPS))
    workload_rng = np.random.Generator(np.random.PCG64(children[0]))
    streams = [*GROUPS, OUTBOX_RELAY, FAULT_DRAWS]
    rngs: dict[str, random.Random] = {
        name: random.Random(int(children[i + 1].generate_state(2, np.uint64)[0]))
        for i, name in enumerate(streams)
    }
    return workload_rng, rngs
