"""Checkpoint granularity (issue item 8): a crash of every agent worker at the peak makes runs
redo the work since their last checkpoint; per step, per agent and per run decide the model calls
and tokens paid again. The course's worker-crash scenario: 0.5 runs/s of 20 model calls of 2 s, so
about 20 calls (and 20 runs) in flight when the workers die."""

from __future__ import annotations

import numpy as np
import pytest

from simulator.engine.eventlog import Topic
from simulator.faults.checkpoint import CheckpointRework, agents_per_run, position_in_run
from tests.simulator.faults.builders import course_scenario, reference, run

TOKENS_PER_CALL = 1500 + 300
IN_FLIGHT = 0.5 * 20 * 2.0


def crash(granularity: str, cache: bool = True):
    sim, result = run(
        reference(checkpoint={"granularity": granularity}, model={"cache": {"enabled": cache}}),
        course_scenario("worker-crash"),
    )
    return sim.layer(CheckpointRework), result.metrics


def test_per_step_redoes_only_the_calls_in_flight() -> None:
    """Without a response cache the calls in flight at the crash are paid again; with the
    reference's cache their answers, stored when the provider returned them, answer the repeats."""
    rework, m = crash("per_step", cache=False)
    assert rework.calls_redone == 0
    assert 0 < m.model_calls_repeated <= 1.5 * IN_FLIGHT
    assert m.tokens_repeated == m.model_calls_repeated * TOKENS_PER_CALL
    _, cached = crash("per_step")
    assert cached.model_calls_repeated == 0
    assert cached.cache_hits == m.model_calls_repeated


def test_per_run_sends_every_run_in_progress_back_to_its_start() -> None:
    """About 20 runs in progress, halfway through their 20 calls on average: about 200 calls."""
    rework, m = crash("per_run")
    _, per_step = crash("per_step")
    assert rework.runs_resumed == pytest.approx(IN_FLIGHT, rel=0.35)
    assert rework.calls_redone == pytest.approx(IN_FLIGHT * 20 / 2, rel=0.35)
    assert m.model_calls_repeated == per_step.model_calls_repeated + rework.calls_redone
    assert m.tokens_repeated == m.model_calls_repeated * TOKENS_PER_CALL
    assert m.model_calls == per_step.model_calls + rework.calls_redone
    assert rework.seconds_redone == pytest.approx(2.0 * rework.calls_redone, rel=0.1)


def test_per_agent_redoes_the_current_agents_calls() -> None:
    """Eight agents a run (planner, 5 researchers, writer, reviewer): a run redoes the calls of its
    current agent so far, about 20 / 8 / 2 each."""
    assert agents_per_run(reference()) == 8
    per_agent, m = crash("per_agent")
    per_run, _ = crash("per_run")
    assert 0 < per_agent.calls_redone < per_run.calls_redone / 4
    assert per_agent.calls_redone == pytest.approx(IN_FLIGHT * 20 / 8 / 2, rel=0.6)
    assert m.tokens_repeated == m.model_calls_repeated * TOKENS_PER_CALL


def test_reused_recorded_results_are_not_paid_again() -> None:
    """Without dedupe (and no cache), redelivered steps that had completed run again: reading
    their recorded results back saves exactly those model calls."""
    s = course_scenario("worker-crash")
    base = {"delivery": {"dedupe": "none"}, "model": {"cache": {"enabled": False}}}
    reused = run(reference(checkpoint={"reuse_recorded_results": True}, **base), s)[1].metrics
    called = run(reference(checkpoint={"reuse_recorded_results": False}, **base), s)[1].metrics
    assert reused.duplicate_effects == called.duplicate_effects > 0
    assert called.model_calls_repeated == reused.model_calls_repeated + called.duplicate_effects


def test_positions_in_run() -> None:
    """Events of runs 7 and 3 interleaved on two partitions: index within the run by arrival."""
    arrival = np.array([0.0, 2.0, 1.0, 3.0, 4.0])
    run_ids = np.array([7, 7, 3, 3, 7])
    topic = Topic(
        name="agent",
        partitions=2,
        start=np.array([0, 2, 5]),
        arrival_s=arrival,
        step_s=np.ones(5),
        run=run_ids,
        key=np.zeros(5, dtype=np.uint64),
        arrival_sorted_s=np.sort(arrival),
        written_s=arrival,
    )
    index, size = position_in_run(topic)
    assert index.tolist() == [0, 1, 0, 1, 2]
    assert size.tolist() == [3, 3, 2, 2, 3]


def test_per_step_checkpoints_write_once_per_model_call_per_run_once_per_run() -> None:
    """The peak's runs make 20 model calls each: per-step checkpoints write 20 times a run,
    per-agent 8 (planner, 5 researchers, writer, reviewer), per-run once (a run cut by the
    window's ends has fewer calls in it, so the coarser shares are a little above 8/20, 1/20)."""
    s = course_scenario("peak", duration_seconds=300)
    writes = {
        g: run(reference(checkpoint={"granularity": g}), s)[1].metrics
        for g in ("per_step", "per_agent", "per_run")
    }
    agent_steps = writes["per_step"].by_group["agent"].processed
    assert writes["per_step"].checkpoint_writes == agent_steps
    per_agent = writes["per_agent"].checkpoint_writes / agent_steps
    per_run = writes["per_run"].checkpoint_writes / agent_steps
    assert 8 / 20 <= per_agent <= 1.2 * 8 / 20
    assert 1 / 20 <= per_run <= 1.2 / 20


def test_checkpoint_writes_take_write_capacity_from_the_state_group() -> None:
    """A store of 40 writes/s: the state group's 20 writes/s share it with 10 checkpoint writes/s
    per step and 0.5/s per run, so its writes wait longer with per-step checkpoints."""
    s = course_scenario("peak", duration_seconds=300)
    store = {"write_capacity_per_second": 40}
    per_step = run(reference(state_store=store), s)[1].metrics.by_group["state"]
    per_run = run(reference(state_store=store, checkpoint={"granularity": "per_run"}), s)[
        1
    ].metrics.by_group["state"]
    assert per_step.wait_mean_s > 1.2 * per_run.wait_mean_s
