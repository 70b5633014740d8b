"""Step 12's `transient-not-parked`: one attempt, or retries with no backoff, park the model calls
that failed once with an error that clears (the poison scenario's flaky events), while the
reference's spaced retries get them through; its texts name the design's attempts, first backoff
and the run's counts (both designs passed all nine points of step 12 before the check)."""

from __future__ import annotations

import pytest

from app.grading.grader import grade, load_material
from simulator.files import load_design
from tests.course.conftest import STEPS_DIR

MATERIAL = load_material(STEPS_DIR)
STEP = [s for s in MATERIAL.loaded.steps if s.step is not None and s.step.id == "poison-messages"]


def _graded(file: str, seed: int = 1):
    (step,) = grade(load_design(STEPS_DIR / "designs" / file), MATERIAL, seed=seed, only=STEP).steps
    assert step.metrics is not None
    return step, {c.id: c for c in step.checks}["transient-not-parked"]


def test_the_reference_gets_every_flaky_event_through() -> None:
    step, check = _graded("reference.yaml")
    m = step.metrics
    assert m is not None and m.flaky_events and m.flaky_recovered
    assert check.status == "pass" and check.kind == "simulated" and check.points == 2
    assert m.flaky_given_up == 0
    assert check.message.startswith(f"{m.flaky_recovered} of {m.flaky_events} brief failures")
    assert "(6 attempts, first backoff 1.0 s); 0 given up" in check.message
    assert "6 attempts, first backoff 1.0 s, doubling up to 16 s, full jitter" in check.explanation


@pytest.mark.parametrize(
    ("file", "how"),
    [
        ("bad/single-attempt.yaml", "at the first failure (1 attempt)"),
        (
            "bad/no-backoff.yaml",
            "after 6 attempts (first backoff 0.0 s) spread over 0.05 s at most",
        ),
    ],
)
def test_one_attempt_or_no_backoff_parks_every_flaky_event(file: str, how: str) -> None:
    step, check = _graded(file)
    m = step.metrics
    assert m is not None and m.flaky_events and m.flaky_clear_max_s
    assert check.status == "fail" and check.points == 0
    assert m.flaky_given_up == m.flaky_events
    n = m.flaky_events
    assert check.message.startswith(f"{n} of {n} events that failed with an unclassified error")
    assert how in check.message
    assert f"cleared within {m.flaky_clear_max_s:.2f} s" in check.message
    assert "They wait on the dead-letter topic" in check.message
    assert f"given up {n} = 100 % (want at most 5 %)" in check.explanation
    # Nothing else of step 12 fails: the poison events are still bounded, parked and in order.
    assert [c.id for c in step.checks if c.status != "pass"] == ["transient-not-parked"]
