"""Failures a reviewer met that named no cause, or the wrong one: a cap of two researchers sat on
the line of research-in-parallel (29.6-30.0 s against 30 s, so the verdict turned with the seed),
a crash of every agent worker was "not exercised", two agent instances too many for the budget
were hinted at tokens, and replication factor 2 with min.insync.replicas 2 was hinted into
min.insync.replicas 1, which the other replication check fails."""

from __future__ import annotations

import pytest

from tests.course.test_failing_texts import _reference, _step, _with


@pytest.mark.parametrize("seed", [1, 3])
def test_a_cap_of_two_researchers_fails_parallel_research_and_names_the_cap(seed):
    step = _step_at(_with(_reference(), **{"orchestration.max_subagents": 2}), seed)
    check = {c.id: c for c in step.checks}["research-in-parallel"]
    assert check.status == "fail"
    assert "max_subagents 2 splits the research over 2 researchers at most" in check.message
    assert "one step after another" not in check.message
    assert "a higher max_subagents (now 2)" in check.hint
    three = _step_at(_with(_reference(), **{"orchestration.max_subagents": 3}), seed)
    assert {c.id: c.status for c in three.checks}["research-in-parallel"] == "pass"


def _step_at(design, seed):
    from app.grading.grader import grade
    from tests.course.test_failing_texts import _material

    material = _material()
    only = [s for s in material.loaded.steps if s.step is not None and s.step.id == "orchestration"]
    (step,) = grade(design, material, seed=seed, only=only).steps
    return step


def test_a_crash_of_every_agent_worker_fails_and_asks_for_survivors():
    design = _with(_reference(), **{"consumers.agent.instances": 2, "event_log.partitions": 200})
    check = {c.id: c for c in _step(design, "worker-crash").checks}["lost-worker-noticed"]
    assert check.status == "fail"
    assert check.message == (
        "The crash took every agent worker (2 of 2): with no survivor to take their partitions, "
        "they waited 300 s for the workers to come back."
    )
    assert check.hint.startswith("More agent instances than one crash takes (2; now 2)")


def test_idle_worker_instances_over_the_budget_are_hinted_at_the_workers():
    design = _with(_reference(), **{"consumers.agent.instances": 103})
    check = {c.id: c for c in _step(design, "evening-peak").checks}["within-budget"]
    assert check.status == "fail"
    assert check.hint.startswith("Fewer worker instances ($12,")
    assert "paid repeats" not in check.hint and "fan-out" not in check.hint


def test_replication_factor_2_with_min_insync_2_is_hinted_at_the_factor():
    design = _with(
        _reference(), **{"event_log.replication_factor": 2, "event_log.min_insync_replicas": 2}
    )
    checks = {c.id: c for c in _step(design, "event-log").checks}
    assert checks["broker-loss-keeps-writing"].status == "fail"
    assert checks["broker-loss-keeps-writing"].hint.startswith(
        "Raise the replication factor to 3 (now 2), with min.insync.replicas 2"
    )
    assert checks["broker-loss-nothing-lost"].status == "pass"


def test_peak_utilisation_names_the_binding_limit_and_hints_at_it():
    few_instances = _with(
        _reference(), **{"consumers.agent.instances": 2, "event_log.partitions": 200}
    )
    check = {c.id: c for c in _step(few_instances, "evening-peak").checks}["peak-utilisation"]
    assert check.status == "fail"
    assert check.message.startswith("The agent workers' 24 slots (2 instances x 12) are 8")
    assert check.hint == "More agent instances or concurrency per instance (now 2 x 12)."
    few_partitions = _with(_reference(), **{"event_log.partitions": 24})
    check = {c.id: c for c in _step(few_partitions, "evening-peak").checks}["peak-utilisation"]
    assert check.status == "fail"
    assert check.message.startswith("The agent group's 24 partitions (one call at a time each)")
    assert check.hint.startswith("More partitions (now 24)")


def test_a_concurrency_limit_is_named_and_hinted_as_calls_in_flight():
    design = _with(_reference(), **{"model.primary.max_concurrency": 24})
    check = {c.id: c for c in _step(design, "agents-tools-model").checks}["model-capacity"]
    assert check.status == "fail"
    assert "its bursts of calls in flight above your 24 wait for a slot" in check.message
    assert check.hint.startswith("More requests in flight at once (max_concurrency, now 24)")


def test_a_short_fallback_names_its_tightest_limit():
    design = _with(_reference(), **{"model.fallback.tpm": 500_000})
    check = {c.id: c for c in _step(design, "provider-outage").checks}["outage-runs-keep-moving"]
    assert check.status == "fail"
    assert "of the fallback's capacity, its TPM (500,000) the tightest" in check.message
    assert "calls that reached it" in check.message
    assert "TPM 500,000" in check.hint
