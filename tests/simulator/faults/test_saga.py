"""Sagas over side-effecting tools (issue item 9, worked item 7): steps fail independently,
compensations run in reverse order with their own keys, a compensation that keeps failing sends
the saga to a human queue, an irreversible step placed first is left undone by a later failure.
The closed form holds exactly; 200,000 simulated sagas agree within 3 standard errors; sagas in a
simulation come out of ``simulate``, their repeated and misapplied compensations counted apart
from the pipeline's ``duplicate_effects``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from simulator.closed_forms.saga import saga_outcomes
from simulator.design import CompensationOrder, SagaSection
from simulator.faults.saga import Sagas, draw_sagas
from tests.simulator.faults.builders import design, run, scenario

REVERSE = SagaSection(
    enabled=True,
    compensation_order="reverse",
    compensation_idempotency_key=True,
    max_compensation_attempts=3,
    escalate_to_human_queue=True,
    irreversible_steps_last=True,
)
"""The course's saga: reverse order, keyed compensations, escalation, the irreversible step (the
delivery) last, so that no failure comes after it."""
N = 200_000
FORWARD = CompensationOrder.forward


def proportion_standard_error(p: float, n: int) -> float:
    """Standard error of a proportion estimated from ``n`` Bernoulli trials: sqrt(p(1-p)/n)."""
    return math.sqrt(p * (1.0 - p) / n)


def test_worked_item_7_closed_form() -> None:
    o = saga_outcomes(0.98, 3)
    assert o.p_complete == pytest.approx(0.941192, abs=1e-12)
    assert o.p_fail == pytest.approx(0.058808, abs=1e-12)
    assert o.p_first_failure_at == pytest.approx((0.02, 0.0196, 0.019208), abs=1e-12)
    assert o.expected_compensations == pytest.approx(0.058016, abs=1e-12)
    assert o.p_needs_compensation == pytest.approx(0.038808, abs=1e-12)


def test_worked_item_7_by_simulating_200000_sagas() -> None:
    d = draw_sagas(N, 3, 0.98, np.random.default_rng(7), REVERSE)
    o = saga_outcomes(0.98, 3)
    complete = float(np.mean(d.failed_at < 0))
    assert abs(complete - o.p_complete) <= 3 * proportion_standard_error(o.p_complete, N)
    for k, p in enumerate(o.p_first_failure_at):
        share = float(np.mean(d.failed_at == k))
        assert abs(share - p) <= 3 * proportion_standard_error(p, N)
    needs = float(np.mean(d.failed_at >= 1))
    assert abs(needs - o.p_needs_compensation) <= 3 * proportion_standard_error(
        o.p_needs_compensation, N
    )
    comps = d.compensations.astype(float)
    sem = comps.std(ddof=1) / math.sqrt(N)
    assert abs(comps.mean() - o.expected_compensations) <= 3 * sem
    assert not d.to_human_queue.any()  # compensations always succeed here


def test_compensations_that_keep_failing_go_to_the_human_queue() -> None:
    """Compensation attempts succeed 0.6 of the time, 3 attempts each: 0.064 of compensations
    fail every attempt; the closed form gives the share of sagas reaching the human queue."""
    d = draw_sagas(N, 3, 0.9, np.random.default_rng(11), REVERSE, compensation_success=0.6)
    o = saga_outcomes(0.9, 3, compensation_success=0.6, max_compensation_attempts=3)
    human = float(np.mean(d.to_human_queue))
    assert abs(human - o.p_to_human_queue) <= 3 * proportion_standard_error(o.p_to_human_queue, N)
    attempts = d.attempts.astype(float)
    sem = attempts.std(ddof=1) / math.sqrt(N)
    assert abs(attempts.mean() - o.expected_compensation_attempts) <= 3 * sem
    assert not d.left_undone.any()  # every stuck saga was escalated


def test_order_keys_and_escalation_decide_the_damage() -> None:
    rng = np.random.default_rng(3)
    forward = draw_sagas(
        N, 3, 0.9, rng, REVERSE.model_copy(update={"compensation_order": "forward"})
    )
    # Forward order: every compensation after the first undoes a step whose prerequisite is gone.
    assert forward.misapplied.sum() == np.count_nonzero(forward.compensations >= 2)
    assert forward.misapplied.sum() > 0
    unkeyed = REVERSE.model_copy(update={"compensation_idempotency_key": False})
    retried = draw_sagas(N, 3, 0.9, rng, unkeyed, compensation_success=0.5, applied_on_failure=1.0)
    # Every failed attempt had landed, so each retry (attempts beyond the first of every
    # compensation started) applies the effect a second time without a key.
    assert retried.duplicates.sum() == (retried.attempts - retried.compensations).sum() > 0
    keyed = draw_sagas(N, 3, 0.9, rng, REVERSE, compensation_success=0.5, applied_on_failure=1.0)
    assert keyed.duplicates.sum() == 0
    silent = draw_sagas(
        N,
        3,
        0.9,
        rng,
        REVERSE.model_copy(update={"escalate_to_human_queue": False}),
        compensation_success=0.5,
    )
    assert silent.to_human_queue.sum() == 0
    assert silent.left_undone.sum() == silent.stuck.sum() > 0
    none = draw_sagas(N, 3, 0.9, rng, SagaSection(enabled=True, compensation_order="none"))
    assert none.compensations.sum() == 0
    assert none.left_undone.sum() == np.count_nonzero(none.failed_at >= 1)


def test_an_irreversible_first_step_is_left_undone_by_a_later_failure() -> None:
    """With the irreversible step first, every saga failing after it (at step 2 or 3) stays half
    done, escalated or not: p (1 - p) + p^2 (1 - p) = 0.171 of them at p = 0.9; placed last, only
    the stuck sagas that no one was told about are."""
    first = REVERSE.model_copy(update={"irreversible_steps_last": False})
    d = draw_sagas(N, 3, 0.9, np.random.default_rng(5), first, compensation_success=0.5)
    after_first = d.failed_at >= 1
    assert np.array_equal(d.left_undone, after_first | (d.stuck & ~d.to_human_queue))
    share = float(np.mean(d.left_undone))
    expected = saga_outcomes(0.9, 3).p_needs_compensation
    assert expected == pytest.approx(0.171)
    assert abs(share - expected) <= 3 * proportion_standard_error(expected, N)
    assert d.to_human_queue.any()  # escalation still happens: it does not undo the delivery
    last = draw_sagas(N, 3, 0.9, np.random.default_rng(5), REVERSE, compensation_success=0.5)
    assert not last.left_undone.any()


def test_approvals_that_never_come_hold_sagas_unless_a_deadline_expires_them() -> None:
    d = draw_sagas(N, 3, 0.95, np.random.default_rng(9), REVERSE, approval_never=0.03)
    share = float(np.mean(d.held_forever))
    assert abs(share - 0.03) <= 3 * proportion_standard_error(0.03, N)
    deadline = REVERSE.model_copy(update={"approval_deadline_hours": 24})
    expired = draw_sagas(N, 3, 0.95, np.random.default_rng(9), deadline, approval_never=0.03)
    assert not expired.held_forever.any()


def test_a_compensation_the_receiver_never_accepts_fails_every_attempt() -> None:
    """A share 0.1 of compensations impossible on top of attempts that always succeed: a saga
    failing at step k is stuck with probability 1 - 0.9^(k - 1) (every stuck one escalated)."""
    d = draw_sagas(N, 3, 0.9, np.random.default_rng(13), REVERSE, impossible=0.1)
    o = saga_outcomes(0.9, 3)
    expected = sum(p * (1 - 0.9**k) for k, p in enumerate(o.p_first_failure_at))
    share = float(np.mean(d.to_human_queue))
    assert abs(share - expected) <= 3 * proportion_standard_error(expected, N)
    assert np.array_equal(d.stuck, d.to_human_queue)


def saga_run(saga: dict[str, Any], **fault: Any):
    """10 runs/s for 300 s, each with 12 tool calls carrying 4 sagas of 3 steps (12,000 sagas)."""
    d = design(
        event_log={"partitions": 128},
        orchestration={"pattern": "orchestrator_worker", "max_subagents": 5},
        consumers={
            "agent": {"instances": 4, "concurrency_per_instance": 32},
            "tool": {"instances": 4, "concurrency_per_instance": 32},
        },
        tools={"runners": 32, "concurrency_per_runner": 8, "saga": saga},
    )
    s = scenario(
        [{"kind": "saga_failure", "steps": 3, "sagas_per_run": 4, **fault}],
        duration_seconds=300,
        load={
            "runs_per_second": 10,
            "fan_out": {"model_calls": 1, "tool_calls": 12, "state_writes": 1},
        },
    )
    return run(d, s, 5)


def test_sagas_in_a_simulation_match_the_closed_form() -> None:
    saga = {"enabled": True, "compensation_order": "reverse", "compensation_idempotency_key": True}
    sim, result = saga_run(saga, step_success=0.98, compensation_success=1.0)
    state = sim.layer(Sagas).state
    assert state is not None
    counted = state.counted
    n = counted["sagas"]
    assert n > 10_000
    m = result.metrics
    o = saga_outcomes(0.98, 3)
    # Compensations per saga: mean 0.058016, variance E[X^2] - mean^2 with X = k - 1.
    second = sum(k * k * p for k, p in enumerate(o.p_first_failure_at))
    sem = math.sqrt((second - o.expected_compensations**2) / n)
    assert abs(m.saga_compensations / n - o.expected_compensations) <= 3 * sem
    assert m.sagas_to_human_queue == 0
    assert m.duplicate_effects == 0
    assert any("sagas:" in note for note in result.notes)


def test_forward_compensation_and_unkeyed_retries_show_as_misapplied_and_repeated() -> None:
    """Out-of-order and repeated compensations have metrics of their own
    (``compensations_misapplied``, ``compensations_repeated``); the pipeline's
    ``duplicate_effects`` (redelivered steps applied again) does not count them."""
    forward = {
        "enabled": True,
        "compensation_order": "forward",
        "compensation_idempotency_key": True,
    }
    sim, result = saga_run(forward, step_success=0.8, compensation_success=1.0)
    state = sim.layer(Sagas).state
    assert state is not None
    m = result.metrics
    assert m.compensations_misapplied == state.counted["compensations_misapplied"] > 0
    assert m.compensations_repeated == 0  # keyed: a retry is recognised
    assert m.duplicate_effects == 0
    unkeyed = {"enabled": True, "compensation_order": "reverse", "escalate_to_human_queue": True}
    sim, retried = saga_run(
        unkeyed, step_success=0.8, compensation_success=0.5, applied_on_failure=1.0
    )
    state = sim.layer(Sagas).state
    assert state is not None
    r = retried.metrics
    assert r.compensations_repeated == state.counted["compensations_repeated"] > 0
    assert r.compensations_misapplied == 0
    assert r.duplicate_effects == 0
    assert r.sagas_to_human_queue > 0


def test_compensation_attempts_are_tool_calls_that_take_time() -> None:
    saga = {"enabled": True, "compensation_order": "reverse", "compensation_idempotency_key": True}
    sim, _ = saga_run(saga, step_success=0.8, compensation_success=0.5)
    state = sim.layer(Sagas).state
    assert state is not None
    topic = sim.engine.topics["tool"]
    extra = sum(
        sum(part.step) - float(topic.step_s[topic.start[p] : topic.start[p + 1]].sum())
        for p, part in enumerate(sim.engine.groups["tool"].parts)
    )
    valid = state.decisive_rows >= 0
    attempts = int(state.draws.attempts[valid].sum())
    assert attempts > 0
    assert extra == pytest.approx(attempts * float(topic.step_s.mean()), rel=1e-9)


def test_forward_calls_retried_after_a_timeout_repeat_their_effect_unless_keyed() -> None:
    """A completed forward step whose response timed out is called again by its worker
    (``tool_retries_after_effect``, binomial with ``forward_timeout_share`` per completed step);
    the retry repeats the effect (``duplicate_effects``) unless the call carries the event's
    idempotency key, and a key per attempt is no key."""
    saga = {"enabled": True, "compensation_order": "reverse", "compensation_idempotency_key": True}
    keyed = {
        "tools": {
            "runners": 32,
            "concurrency_per_runner": 8,
            "saga": saga,
            "side_effect_idempotency_key": True,
        },
        "delivery": {
            "commit": "after_processing",
            "dedupe": "durable_same_transaction",
            "idempotency_key_from": "event_id",
        },
    }
    s = scenario(
        [
            {
                "kind": "saga_failure",
                "steps": 3,
                "sagas_per_run": 4,
                "step_success": 0.9,
                "forward_timeout_share": 0.05,
            }
        ],
        duration_seconds=300,
        load={
            "runs_per_second": 10,
            "fan_out": {"model_calls": 1, "tool_calls": 12, "state_writes": 1},
        },
    )
    base = {
        "event_log": {"partitions": 128},
        "orchestration": {"pattern": "orchestrator_worker", "max_subagents": 5},
        "consumers": {
            "agent": {"instances": 4, "concurrency_per_instance": 32},
            "tool": {"instances": 4, "concurrency_per_instance": 32},
        },
    }
    sim, with_key = run(design(**base, **keyed), s, 5)
    state = sim.layer(Sagas).state
    assert state is not None
    n = state.counted["sagas"]
    m = with_key.metrics
    # About 0.05 x (completed steps: 3 per completed saga, k per saga failed at step k + 1).
    completed = float(np.where(state.draws.failed_at >= 0, state.draws.failed_at, 3).mean())
    expected = 0.05 * completed * n
    assert abs(m.tool_retries_after_effect - expected) <= 4 * math.sqrt(expected)
    assert m.duplicate_effects == 0
    per_attempt = {**keyed["delivery"], "idempotency_key_from": "random_per_attempt"}
    for changes in (
        {"tools": {**keyed["tools"], "side_effect_idempotency_key": False}},
        {"delivery": per_attempt},
    ):
        _, unkeyed = run(design(**base, **{**keyed, **changes}), s, 5)
        u = unkeyed.metrics
        assert u.tool_retries_after_effect == m.tool_retries_after_effect > 0
        assert u.duplicate_effects == u.tool_retries_after_effect


@pytest.mark.parametrize("commit", ["after_processing", "auto", "before_processing"])
@pytest.mark.parametrize("seed", [3, 7, 20])
def test_the_course_saga_judges_the_side_effect_key_whatever_the_commit(
    commit: str, seed: int
) -> None:
    """The course's saga retries calls after a timeout at every seed and commit mode, so step
    10's key check is exercised even when the crashed call's offset was already committed."""
    from tests.simulator.faults.builders import course_scenario, reference

    s = course_scenario("saga", seed=seed)
    _, good = run(reference(delivery={"commit": commit}), s)
    assert good.metrics.tool_retries_after_effect > 0
    assert good.metrics.duplicate_effects == 0
    _, bad = run(
        reference(delivery={"commit": commit}, tools={"side_effect_idempotency_key": False}), s
    )
    assert bad.metrics.duplicate_effects >= bad.metrics.tool_retries_after_effect > 0
