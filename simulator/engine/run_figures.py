"""The figures of causal runs, read once a simulation has ended: run latency percentiles, runs
completed and stalled, order per run and per agent task, the dual write's lost publishes, the
work path and the tokens a completed run paid (``simulator.engine.causal`` holds the run model)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from simulator.engine.causal import (
    CausalRuns,
    critical_paths,
    order_violations_by,
    run_latencies,
)
from simulator.engine.eventlog import Topic
from simulator.engine.metrics import percentiles, sig
from simulator.engine.taskgraph import TaskGraph
from simulator.groups import GROUPS


def model_calls_per_run(graph: TaskGraph, done_s: np.ndarray, duration_s: float) -> float | None:
    """Mean model calls a completed run made (its graph's model-call steps), None when no run
    completed. ``done_s``: each run's finish time, seconds (inf when unfinished)."""
    completed = done_s <= duration_s
    if not completed.any():
        return None
    calls = np.bincount(graph.run[graph.kind == 0], minlength=graph.runs)
    return float(calls[completed].mean())


def tokens_per_run(
    graph: TaskGraph, done_s: np.ndarray, duration_s: float, tokens_per_call: int
) -> float | None:
    """Mean tokens of the model calls a completed run made (its graph's calls x tokens per call),
    None when no run completed. ``done_s``: each run's finish time, seconds (inf when
    unfinished)."""
    calls = model_calls_per_run(graph, done_s, duration_s)
    return None if calls is None else sig(calls * tokens_per_call)


def run_figures(
    world: CausalRuns,
    graph: TaskGraph,
    topics: Mapping[str, Topic],
    applied_s: Callable[[str], np.ndarray],
    duration_s: float,
    tokens_per_call: int,
) -> dict[str, float | int | None]:
    """The causal run's top-level metrics, by their key in ``simulator.result.Metrics``.

    ``applied_s(group)``: the first time each of the group's log entries was applied, seconds,
    aligned with ``topics[group].event``. Latencies count a run unfinished at ``duration_s`` at
    its age then (censored); order violations are counted per topic, where Kafka keeps order."""
    done = np.frombuffer(world.run_done_s, dtype=np.float64)
    latency, completed, stalled = run_latencies(graph.request_s, done, duration_s)
    p50, p95, p99 = percentiles(latency, [50, 95, 99])
    hop_s = world.tick_s / 2 + (world.relay.mean_delay_s if world.relay is not None else 0.0)
    critical = float(np.median(critical_paths(graph, hop_s))) if graph.runs else 0.0
    by_run = by_task = 0
    for name in GROUPS:
        topic = topics[name]
        if topic.event is None or topic.event.size == 0:
            continue
        ev = topic.event
        run, task = order_violations_by(
            [graph.run[ev], graph.task[ev]], topic.written_s, ev, applied_s(name)
        )
        by_run += run
        by_task += task
    return {
        "run_latency_p50_s": sig(p50),
        "run_latency_p95_s": sig(p95),
        "run_latency_p99_s": sig(p99),
        "run_critical_path_s": sig(critical),
        "runs_completed": completed,
        "runs_stalled": stalled,
        "order_violations_run": by_run,
        "order_violations_task": by_task,
        "publishes_lost": len(world.unpublished),
        "run_work_path_s": sig(float(np.median(critical_paths(graph, 0.0)))) if graph.runs else 0.0,
        "tokens_per_run": tokens_per_run(graph, done, duration_s, tokens_per_call),
        "model_calls_per_run": _sig_or_none(model_calls_per_run(graph, done, duration_s)),
    }


def _sig_or_none(x: float | None) -> float | None:
    return None if x is None else sig(x)
