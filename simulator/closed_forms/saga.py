"""Sagas over side-effecting steps: closed forms for the chance of each outcome.

A saga (Garcia-Molina and Salem, "Sagas", SIGMOD 1987) is a sequence of local transactions
T1..Tn; when Tk fails, the compensations C(k-1)..C1 undo the completed steps in reverse order.
Here each step succeeds independently with its own probability. A compensation may itself fail:
it is retried up to ``max_compensation_attempts`` times, each attempt succeeding independently with
``compensation_success``; when every attempt of a compensation fails, the saga stops compensating
and goes to a human queue.

Worked numbers (three steps, p = 0.98): completes 0.941192, fails 0.058808, first failure at step
k with p^(k-1) (1 - p) = 0.02, 0.0196, 0.019208, expected compensations 0.058016, needs at least
one compensation 0.038808.

The simulation draws sagas with the same rules (``simulator.faults.saga``); its tests and the
course's worked numbers check it against these closed forms.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


def _steps(p_steps: float | Sequence[float], steps: int | None) -> list[float]:
    if isinstance(p_steps, int | float):
        if steps is None:
            raise ValueError("give steps when p_steps is a single probability")
        probs = [float(p_steps)] * steps
    else:
        if steps is not None and steps != len(p_steps):
            raise ValueError(f"steps={steps} but {len(p_steps)} step probabilities were given")
        probs = [float(p) for p in p_steps]
    if not probs:
        raise ValueError("a saga needs at least one step")
    for p in probs:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"a step success probability must lie in [0, 1], got {p}")
    return probs


def _check_compensation(compensation_success: float, max_compensation_attempts: int) -> None:
    if not 0.0 <= compensation_success <= 1.0:
        raise ValueError(f"compensation_success must lie in [0, 1], got {compensation_success}")
    if max_compensation_attempts < 1:
        raise ValueError(f"max_compensation_attempts must be >= 1, got {max_compensation_attempts}")


@dataclass(frozen=True)
class SagaOutcomes:
    """Probabilities and expectations for one saga (all per saga, dimensionless).

    - ``p_complete``: every step succeeds, the product of the step probabilities.
    - ``p_fail``: 1 - ``p_complete``.
    - ``p_first_failure_at``: element k-1 is P(first failure at step k) = p1...p(k-1) (1 - pk).
    - ``expected_compensations``: sum over k of (k - 1) P(first failure at step k), the
      compensations that must run (a failure at step k leaves k - 1 completed steps).
    - ``p_needs_compensation``: P(first failure at step k >= 2).
    - ``p_to_human_queue``: P(some compensation fails all its attempts); with a failure at step k
      that is 1 - (1 - (1 - q)^N)^(k-1) for compensation success q and N attempts.
    - ``expected_compensation_attempts``: compensation attempts, retries included, per saga.
    """

    steps: int
    p_complete: float
    p_fail: float
    p_first_failure_at: tuple[float, ...]
    expected_compensations: float
    p_needs_compensation: float
    p_to_human_queue: float
    expected_compensation_attempts: float


def saga_outcomes(
    p_steps: float | Sequence[float],
    steps: int | None = None,
    *,
    compensation_success: float = 1.0,
    max_compensation_attempts: int = 1,
) -> SagaOutcomes:
    """Closed forms for a saga whose steps succeed independently.

    Args:
        p_steps: one success probability for every step (then give ``steps``), or one per step.
        steps: number of steps when ``p_steps`` is a single probability.
        compensation_success: probability that one attempt of a compensation succeeds.
        max_compensation_attempts: attempts per compensation before the saga goes to a human.

    Source: independent Bernoulli steps; the first failure at step k is a (truncated) geometric
    event, P = p1...p(k-1) (1 - pk); the saga structure (compensate k - 1 completed steps in
    reverse order) is Garcia-Molina and Salem, SIGMOD 1987.

    Raises ``ValueError`` for probabilities outside [0, 1], no steps, or mismatched ``steps``.
    """
    probs = _steps(p_steps, steps)
    _check_compensation(compensation_success, max_compensation_attempts)
    q = compensation_success
    n_att = max_compensation_attempts
    fail_all = (1.0 - q) ** n_att  # a compensation exhausts its attempts
    # Expected attempts of one compensation: sum_{j<N} (1-q)^j = (1 - (1-q)^N) / q.
    attempts_one = float(n_att) if q == 0.0 else (1.0 - fail_all) / q

    first_failure: list[float] = []
    survive = 1.0
    for p in probs:
        first_failure.append(survive * (1.0 - p))
        survive *= p
    expected_comp = sum(k * pf for k, pf in enumerate(first_failure))
    needs = sum(first_failure[1:])
    to_human = 0.0
    attempts = 0.0
    for k, pf in enumerate(first_failure):
        done = k  # completed steps to compensate
        if done == 0:
            continue
        to_human += pf * (1.0 - (1.0 - fail_all) ** done)
        # Compensation j (1-based) runs only if the j-1 before it succeeded within their attempts.
        reached = sum((1.0 - fail_all) ** j for j in range(done))
        attempts += pf * reached * attempts_one
    return SagaOutcomes(
        steps=len(probs),
        p_complete=survive,
        p_fail=1.0 - survive,
        p_first_failure_at=tuple(first_failure),
        expected_compensations=expected_comp,
        p_needs_compensation=needs,
        p_to_human_queue=to_human,
        expected_compensation_attempts=attempts,
    )
