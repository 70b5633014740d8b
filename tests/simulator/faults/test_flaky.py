"""Flaky events (simulator/faults/flaky.py): an unclassified error that clears a short time after
the first attempt counts toward ``failures.retry.max_attempts``; spaced retries get it through,
a single attempt or retries with no backoff give it up although a retry would have succeeded."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from simulator import simulate
from simulator.engine import make_rngs
from simulator.faults.poison import PoisonEvents
from tests.simulator.faults.builders import (
    course_scenario,
    design,
    known_bad,
    reference,
    run,
    single_stage,
)

FLAKY = {
    "kind": "flaky",
    "rate": 0.05,
    "clears_after_min_seconds": 0.2,
    "clears_after_max_seconds": 1.0,
}


def worked(retry: dict[str, Any], faults: list[dict[str, Any]] | None = None, dlq: bool = True):
    """20 events/s over 48 partitions for 600 s, steps of 0.1 s; 1 event in 20 flaky."""
    d = design(
        event_log={"partitions": 48},
        consumers={"agent": {"instances": 4, "concurrency_per_instance": 12}},
        failures={
            "retry": {"max_backoff_seconds": 16, **retry},
            "dead_letter_queue": {"enabled": dlq},
        },
    )
    s = single_stage(20, 600, 0.1, faults if faults is not None else [FLAKY])
    sim, result = run(d, s, 1)
    return sim.layer(PoisonEvents).states["agent"], result.metrics


def test_spaced_retries_get_every_flaky_event_through() -> None:
    # No jitter: the first retry comes 1 s after the first attempt, when every failure has cleared.
    state, m = worked({"max_attempts": 6, "base_backoff_seconds": 1, "jitter": "none"})
    assert m.flaky_events is not None and m.flaky_events > 400
    # Every one met before the window's last second went through (the rest retry after its end).
    early = [
        e for e in state.flaky.values() if e.first_attempt_s is not None and e.first_attempt_s < 599
    ]
    assert len(early) > 400 and all(e.recovered_s is not None for e in early)
    assert m.flaky_recovered is not None and m.flaky_recovered >= len(early)
    assert (m.flaky_given_up, m.flaky_given_up_after_max_s) == (0, None)
    assert m.flaky_clear_max_s is not None and 0.95 < m.flaky_clear_max_s <= 1.0
    assert all(
        e.failed_attempts == 1 for e in state.flaky.values() if e.first_attempt_s is not None
    )
    assert (m.dead_lettered, m.lost) == (0, 0)


def test_a_single_attempt_parks_every_flaky_event() -> None:
    _, m = worked({"max_attempts": 1, "base_backoff_seconds": 1, "jitter": "full"})
    assert m.flaky_events is not None and m.flaky_events > 400
    assert m.flaky_given_up == m.flaky_events == m.dead_lettered
    assert (m.flaky_recovered, m.flaky_given_up_after_max_s) == (0, 0.0)


def test_retries_without_backoff_spend_every_attempt_in_five_hundredths_of_a_second() -> None:
    # Five waits of the engine's 0.01 s floor: 0.05 s, under the 0.2 s a failure lasts at least.
    _, m = worked({"max_attempts": 6, "base_backoff_seconds": 0, "jitter": "full"})
    assert m.flaky_events is not None and m.flaky_events > 400
    assert m.flaky_given_up == m.flaky_events
    assert m.flaky_given_up_after_max_s == pytest.approx(0.05)


def test_without_a_dead_letter_queue_a_given_up_flaky_event_is_lost() -> None:
    _, m = worked({"max_attempts": 1, "base_backoff_seconds": 1}, dlq=False)
    assert m.flaky_given_up is not None and m.flaky_given_up > 400
    assert (m.lost, m.dead_lettered) == (m.flaky_given_up, 0)


@pytest.mark.parametrize(("attempts", "share"), [(2, 0.60), (3, 0.1033), (4, 0.0065)])
def test_the_share_given_up_under_full_jitter_matches_the_closed_form(
    attempts: int, share: float
) -> None:
    """Base 1 s, full jitter: given up when the n - 1 waits (uniform in [0, 2**(i-1)]) add up
    to less than the failure's c ~ U(0.2, 1.0): E[c] = 60 %, E[c**2] / 4 = 10.3 %,
    E[c**3] / 48 = 0.65 % (the fault's docstring)."""
    _, m = worked(
        {"max_attempts": attempts, "base_backoff_seconds": 1, "jitter": "full"},
        [{**FLAKY, "rate": 0.5}],
    )
    assert m.flaky_events is not None and m.flaky_given_up is not None
    n = m.flaky_events
    assert n > 4000
    sigma = np.sqrt(share * (1 - share) / n)
    assert m.flaky_given_up / n == pytest.approx(share, abs=4 * sigma + 1e-4)


def test_flaky_draws_leave_the_poison_events_and_every_other_stream_alone() -> None:
    poison = {"kind": "poison", "rate": 0.002}
    retry = {"max_attempts": 6, "base_backoff_seconds": 1, "jitter": "full"}
    alone, _ = worked(retry, [poison])
    both, m = worked(retry, [poison, FLAKY])
    assert m.flaky_events
    assert set(both.poison) == set(alone.poison) and len(alone.poison) > 15
    assert not set(both.flaky) & set(both.poison)  # a poison event is never flaky
    # The fault layers' stream is a child spawned after the others: theirs are unchanged.
    children = np.random.SeedSequence(7).spawn(5)
    _, rngs = make_rngs(7)
    for i, name in enumerate(("agent", "tool", "state", "outbox_relay")):
        seed = int(children[i + 1].generate_state(2, np.uint64)[0])
        assert rngs[name].random() == type(rngs[name])(seed).random()


def test_the_course_scenario_parks_flaky_events_only_without_spaced_retries() -> None:
    """The poison scenario: 1 model call in 100 flaky (clearing 0.2-1.0 s after its first
    attempt). The reference (6 attempts, 1 s, full jitter) gets every one through; one attempt,
    or six with no backoff, park every one, and their runs stall."""
    s = course_scenario("poison")
    ref = simulate(reference(), s).metrics
    assert ref.flaky_events is not None and ref.flaky_events > 20
    assert ref.flaky_given_up == 0
    for name in ("single-attempt", "no-backoff"):
        bad = simulate(known_bad(name), s).metrics
        assert bad.flaky_events is not None and bad.flaky_events > 20
        assert bad.flaky_given_up == bad.flaky_events
        assert bad.poison_given_up is not None
        assert bad.dead_lettered >= bad.flaky_given_up + bad.poison_given_up
        assert bad.runs_stalled > ref.runs_stalled
