"""Saga closed forms: worked-numbers item 7 exactly (simulated sagas are checked against them in
tests/simulator/faults/test_saga.py)."""

from __future__ import annotations

import pytest

from simulator.closed_forms.saga import saga_outcomes


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
        saga_outcomes([0.9, 0.9], compensation_success=1.5)
    with pytest.raises(ValueError):
        saga_outcomes([0.9, 0.9], max_compensation_attempts=0)
