"""The estimate and the simulation agree within 15 % on the provider wait (the mean wait of a
model call at the model gateway), capacity, utilisation and drain time, for every course design
(the reference and the known-bad designs; NOT_YET_AGREEING's are expected failures, with why) at
the peak, over seeds 1-3, and for the reference with 24 provider slots for its 96 partitions,
where the gateway queues, over seeds 1-10 (near the limit the wait varies by a factor of 5 from
seed to seed with the number of runs).

The simulation meters calls at the gateway (a slot, room in the RPM and TPM buckets); the
estimate computes the slot queue as Erlang C's M/M/c scaled for a run's bursts, and the buckets'
wait (docs/simulator-model.md, "Provider wait: the gateway meters")."""

from __future__ import annotations

from pathlib import Path
from statistics import mean

import pytest

from simulator import simulate
from simulator.design import Design
from simulator.estimate import estimate
from simulator.files import load_design, load_scenario
from tests.simulator.estimate.known_gaps import with_known_gaps
from tests.simulator.faults.builders import merged

STEPS = Path(__file__).resolve().parents[3] / "steps"
SEEDS = (1, 2, 3)
SLOT_SEEDS = tuple(range(1, 11))
TOLERANCE = 0.15
WAIT_FLOOR_S = 0.01
"""Absolute slack for waits near zero: 10 ms, the precision the pages show a wait with (a wait of
0.014 s against 0.018 s for 2 s calls reads 0.01 and 0.02 s)."""

DESIGNS = [
    STEPS / "designs" / "reference.yaml",
    *sorted((STEPS / "designs" / "bad").glob("*.yaml")),
]


def course_design(path: Path) -> Design:
    return load_design(path)


def fewer_slots(limit: int) -> Design:
    """The reference with ``limit`` provider slots for its 96 partitions."""
    ref = load_design(STEPS / "designs" / "reference.yaml").model_dump(mode="json")
    return Design.model_validate(merged(ref, {"model": {"primary": {"max_concurrency": limit}}}))


CASES: dict[str, Design] = {p.stem: course_design(p) for p in DESIGNS}
CASES["reference, 24 provider slots"] = fewer_slots(24)

NOT_YET_AGREEING: dict[str, str] = {
    "short-poll-interval": "a 1 s max.poll.interval.ms kicks the agent workers again and again "
    "at the peak, and the calls they re-send queue at the gateway (44 s on average, seeds 1-3); "
    "the estimate models no rebalance storm (step 9 judges it)",
}
"""Cases whose provider wait the estimate does not model yet, with why (strict: an agreement there
fails the test, so that the entry is removed)."""


@pytest.mark.parametrize("name", with_known_gaps(CASES, NOT_YET_AGREEING))
def test_estimate_and_simulation_agree_on_provider_wait_at_the_peak(name: str) -> None:
    design = CASES[name]
    scenario = load_scenario(STEPS / "scenarios" / "peak.yaml")
    expected = estimate(design, scenario)
    seeds = SLOT_SEEDS if "slots" in name else SEEDS
    runs = [simulate(design, scenario, seed).metrics for seed in seeds]
    assert expected.model.wait_s is not None, "the course's peak never saturates the provider"
    waited = mean(m.model_wait_mean_s for m in runs)
    assert waited == pytest.approx(expected.model.wait_s, rel=TOLERANCE, abs=WAIT_FLOOR_S), (
        f"{name}: simulated provider wait {waited:.4g} s (seeds {seeds}), "
        f"estimate {expected.model.wait_s:.4g} s"
    )
    for m in runs:
        assert m.capacity_eps == pytest.approx(expected.capacity_eps, rel=TOLERANCE)
        assert m.utilisation == pytest.approx(expected.utilisation, rel=TOLERANCE)
        assert expected.drain_seconds is not None and m.drain_seconds is not None
        assert m.drain_seconds == pytest.approx(expected.drain_seconds, rel=TOLERANCE, abs=1.0)


def test_the_slot_case_exercises_the_gateway() -> None:
    """Not a comparison of zeros: with 24 slots the estimate's wait is 0.149 s (Erlang C) x 2.14
    (a run's five researchers call at once, peakedness 4; lognormal calls) = 0.32 s."""
    scenario = load_scenario(STEPS / "scenarios" / "peak.yaml")
    assert estimate(fewer_slots(24), scenario).model.wait_s == pytest.approx(0.319, abs=0.001)
