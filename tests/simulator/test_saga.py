"""Sagas: worked-numbers item 7 by closed form exactly, and by simulating 100,000 sagas."""

from __future__ import annotations

import random

import pytest

from simulator.saga import proportion_standard_error, saga_outcomes, simulate_sagas


def test_worked_item_7_closed_forms() -> None:
    o = saga_outcomes(0.98, 3)
    assert round(o.p_complete, 6) == 0.941192
    assert round(o.p_fail, 6) == 0.058808
    assert [round(x, 6) for x in o.p_first_failure_at] == [0.02, 0.0196, 0.019208]
    assert round(o.expected_compensations, 6) == 0.058016
    assert round(o.p_needs_compensation, 6) == 0.038808
    # Compensations always succeed by default: nobody reaches the human queue.
    assert o.p_to_human_queue == 0.0
    assert o.expected_compensation_attempts == pytest.approx(0.058016, abs=1e-12)


def test_per_step_probabilities() -> None:
    o = saga_outcomes([0.9, 0.5, 1.0])
    assert o.p_first_failure_at == pytest.approx((0.1, 0.45, 0.0))
    assert o.p_complete == pytest.approx(0.45)
    assert o.expected_compensations == pytest.approx(0.45)


def test_human_queue_closed_form() -> None:
    # Two completed steps to undo; each compensation succeeds 0.5 per attempt, 2 attempts:
    # a compensation fails for good with 0.25, so P(human) given k=3 is 1 - 0.75^2 = 0.4375.
    o = saga_outcomes([1.0, 1.0, 0.0], compensation_success=0.5, max_compensation_attempts=2)
    assert o.p_to_human_queue == pytest.approx(0.4375)
    # Attempts: first compensation 1.5 on average, the second runs with 0.75: 1.5 + 0.75 * 1.5.
    assert o.expected_compensation_attempts == pytest.approx(1.5 + 0.75 * 1.5)


def test_bad_input() -> None:
    with pytest.raises(ValueError):
        saga_outcomes(1.2, 3)
    with pytest.raises(ValueError):
        saga_outcomes(0.9)
    with pytest.raises(ValueError):
        saga_outcomes([0.9, 0.9], steps=3)
    with pytest.raises(ValueError):
        simulate_sagas(0, 0.9, random.Random(1), 3)


def within_3_se(observed: float, expected: float, se: float) -> bool:
    return abs(observed - expected) <= 3 * se


def test_monte_carlo_100k_sagas_within_3_standard_errors() -> None:
    n = 100_000
    closed = saga_outcomes(0.98, 3)
    counts = simulate_sagas(n, 0.98, random.Random(20240601), 3)
    assert counts.sagas == n
    assert counts.completed + counts.failed == n
    p_complete = counts.completed / n
    assert within_3_se(
        p_complete, closed.p_complete, proportion_standard_error(closed.p_complete, n)
    )
    for k, expected in enumerate(closed.p_first_failure_at):
        observed = counts.first_failure_at[k] / n
        assert within_3_se(observed, expected, proportion_standard_error(expected, n))
    needs = counts.needing_compensation / n
    assert within_3_se(
        needs,
        closed.p_needs_compensation,
        proportion_standard_error(closed.p_needs_compensation, n),
    )
    assert within_3_se(
        counts.mean_compensations(),
        closed.expected_compensations,
        counts.standard_error_compensations(),
    )
    # The sample is not degenerate: every first-failure step was seen.
    assert all(c > 1000 for c in counts.first_failure_at)


def test_monte_carlo_human_queue_matches_closed_form() -> None:
    n = 100_000
    steps = [0.9, 0.8, 0.7]
    closed = saga_outcomes(steps, compensation_success=0.7, max_compensation_attempts=2)
    counts = simulate_sagas(
        n, steps, random.Random(7), compensation_success=0.7, max_compensation_attempts=2
    )
    observed = counts.to_human_queue / n
    assert closed.p_to_human_queue > 0.01
    assert within_3_se(
        observed, closed.p_to_human_queue, proportion_standard_error(closed.p_to_human_queue, n)
    )


def test_monte_carlo_is_reproducible_from_the_seed() -> None:
    a = simulate_sagas(10_000, 0.98, random.Random(3), 3)
    b = simulate_sagas(10_000, 0.98, random.Random(3), 3)
    c = simulate_sagas(10_000, 0.98, random.Random(4), 3)
    assert a == b
    assert a != c
