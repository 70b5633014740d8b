"""Runs as causal task graphs (``load.run_model: causal``): the graph, causality, and the lessons.

Each lesson is checked on seeds 1-3 here; ``scripts/causal_runs.py`` sweeps seeds 1-20.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from simulator import simulate
from simulator.design import Design
from simulator.engine.taskgraph import NEXT_FAN_OUT
from simulator.engine.workload import build_workload
from simulator.fan_out import fan_out_per_run, run_tasks
from simulator.files import load_design
from simulator.result import Metrics
from simulator.scenario import Scenario
from simulator.simulation import assemble

STEPS = Path(__file__).resolve().parents[2] / "steps"
SEEDS = (1, 2, 3)
CRASH = {
    "kind": "worker_crash",
    "at_seconds": 150,
    "group": "agent",
    "instances": "all",
    "duration_seconds": 60,
    "mid_batch": True,
}
"""Every agent worker down for 60 s at 150 s, mid-batch."""


def reference(**changes: object) -> Design:
    """The course's reference design with dotted-path changes (``"event_log.partition_key"``)."""
    data = load_design(STEPS / "designs" / "reference.yaml").model_dump(mode="json")
    for path, value in changes.items():
        node = data
        *parents, leaf = path.split(".")
        for p in parents:
            node = node[p]
        node[leaf] = value
    return Design.model_validate(data)


def causal_peak(duration_s: float = 400.0, **faults: object) -> Scenario:
    """The peak load (0.5 runs/s, 20 / 12 / 40 per run) as causal runs."""
    return Scenario.model_validate(
        {
            "name": "causal-peak",
            "duration_seconds": duration_s,
            "load": {"runs_per_second": 0.5, "run_model": "causal"},
            "faults": list(faults.get("faults", [])),  # type: ignore[call-overload]
        }
    )


def metrics(design: Design, scenario: Scenario, seed: int) -> Metrics:
    return simulate(design, scenario, seed).metrics


def test_a_reference_run_is_a_planner_five_parallel_researchers_a_writer_and_a_reviewer() -> None:
    scenario = causal_peak()
    workload = build_workload(reference(), scenario, np.random.default_rng(1))
    graph = workload.graph
    assert graph is not None
    for run in range(3):
        kinds = np.bincount(graph.kind[graph.run == run], minlength=3)
        assert kinds.tolist() == [20, 12, 40]
        assert np.unique(graph.task[graph.run == run]).size == 8
    fan = [s for s, nxt in enumerate(graph.stage_next.tolist()) if nxt == NEXT_FAN_OUT]
    assert len(fan) == graph.runs
    assert all(len(graph.fan_out[s]) == 5 for s in fan)
    writer_first = graph.stage_need.max()
    assert writer_first == 5  # the writer waits for every researcher


def test_orchestration_rules_shape_the_tasks() -> None:
    load = causal_peak().load
    single = run_tasks(reference(**{"orchestration.pattern": "single_agent"}), load)
    assert single.sequential and single.totals == (20.0, 12.0, 40.0)
    assert single.tokens_per_call == pytest.approx(1800 * 4 / 15)
    peers = reference(
        **{
            "orchestration.pattern": "peer_agents",
            "orchestration.max_subagents": None,
            "orchestration.token_budget_per_run": None,
        }
    )
    uncapped = run_tasks(peers, load)
    assert uncapped.researchers == 15 and uncapped.totals[0] == pytest.approx(50.0)
    far_cap = run_tasks(
        peers.model_copy(
            update={"orchestration": peers.orchestration.model_copy(update={"max_subagents": 50})}
        ),
        load,
    )
    assert far_cap.totals == uncapped.totals  # a cap the fan-out never reaches is no cap
    budget = peers.model_copy(
        update={
            "orchestration": peers.orchestration.model_copy(update={"token_budget_per_run": 60_000})
        }
    )
    stopped = run_tasks(budget, load)
    assert stopped.totals[0] * 1800 <= 60_000 < uncapped.totals[0] * 1800
    assert fan_out_per_run(budget, load).model_calls == stopped.totals[0]


@pytest.mark.parametrize("seed", SEEDS)
def test_no_step_event_reaches_the_log_before_the_step_before_it_is_applied(seed: int) -> None:
    design = reference()
    scenario = causal_peak(300.0)
    workload = build_workload(design, scenario, np.random.default_rng(seed))
    assembly = assemble(design, scenario, workload, seed)
    assembly.run()
    sim = assembly.engine
    graph = sim.graph
    assert graph is not None
    applied = np.full(graph.events, np.nan)
    written = np.full(graph.events, np.nan)
    arrival = np.full(graph.events, np.nan)
    for name in ("agent", "tool", "state"):
        topic = sim.topics[name]
        assert topic.event is not None
        applied[topic.event] = sim.first_times(name)[1]
        written[topic.event] = topic.written_s
        arrival[topic.event] = topic.arrival_s
    seen = ~np.isnan(arrival)
    assert seen.sum() > 5_000
    assert np.all(arrival[seen] > written[seen])
    # Every stage after the first of its chain is written when the stage before it completed.
    for stage in range(graph.stage_next.size):
        nxt = int(graph.stage_next[stage])
        if nxt < 0 or graph.stage_need[nxt] != 1:
            continue
        lo, hi = int(graph.stage_lo[stage]), int(graph.stage_lo[stage + 1])
        first_next = int(graph.stage_lo[nxt])
        if np.isnan(written[first_next]):
            continue
        assert written[first_next] == np.max(applied[lo:hi])
    sim.release()


@pytest.mark.parametrize("seed", SEEDS)
def test_a_run_key_serialises_the_research_and_a_task_key_keeps_order_in_parallel(
    seed: int,
) -> None:
    scenario = causal_peak()
    by_run = metrics(reference(**{"event_log.partition_key": "run_id"}), scenario, seed)
    by_task = metrics(reference(**{"event_log.partition_key": "task_id"}), scenario, seed)
    by_event = metrics(reference(**{"event_log.partition_key": "event_id"}), scenario, seed)
    assert by_run.run_latency_p50_s is not None and by_task.run_latency_p50_s is not None
    assert by_run.run_latency_p50_s > 1.3 * by_task.run_latency_p50_s
    assert by_run.order_violations_run == 0
    assert by_task.order_violations_task == 0
    assert by_task.order_violations_run and by_task.order_violations_run > 0
    assert by_event.order_violations_task and by_event.order_violations_task > 0


@pytest.mark.parametrize("seed", SEEDS)
def test_a_single_agent_reports_far_later_for_fewer_tokens(seed: int) -> None:
    scenario = causal_peak()
    team = metrics(reference(**{"event_log.partition_key": "task_id"}), scenario, seed)
    alone = metrics(
        reference(
            **{"event_log.partition_key": "task_id", "orchestration.pattern": "single_agent"}
        ),
        scenario,
        seed,
    )
    assert alone.run_latency_p50_s and team.run_latency_p50_s
    assert alone.run_latency_p50_s > 1.5 * team.run_latency_p50_s
    assert alone.tokens < 0.5 * team.tokens


@pytest.mark.parametrize("seed", SEEDS)
def test_uncapped_peers_multiply_calls_and_a_token_budget_stops_them(seed: int) -> None:
    scenario = causal_peak()
    base = {"event_log.partition_key": "task_id", "orchestration.pattern": "peer_agents"}
    capped = metrics(
        reference(
            **base, **{"orchestration.max_subagents": 5, "orchestration.token_budget_per_run": None}
        ),
        scenario,
        seed,
    )
    uncapped = metrics(
        reference(
            **base,
            **{"orchestration.max_subagents": None, "orchestration.token_budget_per_run": None},
        ),
        scenario,
        seed,
    )
    budget = metrics(
        reference(
            **base,
            **{"orchestration.max_subagents": None, "orchestration.token_budget_per_run": 60_000},
        ),
        scenario,
        seed,
    )
    assert uncapped.model_calls > 1.8 * capped.model_calls
    assert capped.model_calls < budget.model_calls < uncapped.model_calls


@pytest.mark.parametrize("seed", SEEDS)
def test_a_crash_that_loses_steps_stalls_their_runs(seed: int) -> None:
    scenario = causal_peak(400.0, faults=[CRASH])
    keyed = {"event_log.partition_key": "task_id"}
    after = metrics(reference(**keyed), scenario, seed)
    auto = metrics(
        reference(**keyed, **{"delivery.commit": "auto", "delivery.auto_commit_interval_ms": 100}),
        scenario,
        seed,
    )
    assert after.lost == 0
    assert auto.lost > 0
    assert auto.runs_stalled is not None and after.runs_stalled is not None
    assert auto.runs_stalled > after.runs_stalled
    assert auto.runs_completed is not None and after.runs_completed is not None
    assert auto.runs_completed < after.runs_completed


def test_the_open_loop_model_reports_no_run_figures() -> None:
    scenario = causal_peak(120.0).model_copy(
        update={"load": causal_peak().load.model_copy(update={"run_model": "open_loop"})}
    )
    m = metrics(reference(), scenario, 1)
    assert m.run_latency_p50_s is None and m.runs_completed is None
