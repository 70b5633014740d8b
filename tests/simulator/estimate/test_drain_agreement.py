"""The estimate and the simulation agree on the backlog a fault leaves and on the time the queues
take to empty after it, for the reference design in every course scenario (the mean of seeds 1-3,
within 15 % or 3 s; the scenarios of NOT_YET_AGREEING are expected failures, with why): causal
runs stall everywhere when one group stops, resume one step at a time, and drain at the headroom
with the busiest partitions last (simulator.estimate.recovery)."""

from __future__ import annotations

from pathlib import Path
from statistics import mean

import pytest

from simulator import simulate
from simulator.estimate import estimate
from simulator.files import load_design, load_scenario
from tests.simulator.estimate.known_gaps import with_known_gaps

STEPS = Path(__file__).resolve().parents[3] / "steps"
SEEDS = (1, 2, 3)
TOLERANCE = 0.15
FLOOR_S = 3.0
"""Absolute slack for drains near zero: 3 s, one and a half model calls (the drain of a queue that
barely formed: a poison event's partition catching up)."""

SCENARIOS = sorted(p.stem for p in (STEPS / "scenarios").glob("*.yaml"))

NOT_YET_AGREEING = {
    "poison": "the simulated drain is not measurable on every seed (seed 3: None). Poison on the "
    "state group (1 write in 500 at 20 writes/s) stalls a partition every 25 s or so until the "
    "end of the window: the first stall comes while the runs are still filling the pipeline "
    "(19.6 s at seed 3), so the normal lag is read from the warm-up (0.5 events, threshold 2.1), "
    "and at the end three stalls are still on with the lag at its steady level (11-12 events): "
    "'a poison event still stalling its partition at the end of the window'. Seeds 1 and 2: "
    "0 s, the estimate's 0.",
    "saga": "a partial crash of a group other than the drain group (one of the two tool "
    "workers, 30 s). The estimate stalls a run for the whole window when any of its 4.9 tool "
    "partitions is on the crashed member (97 % of the runs: 290 agent calls, just above the 258 "
    "the headroom absorbs over a critical path, so its drain jumps to 24.2 s); in the "
    "simulation a run's task stops only when it reaches a held tool call (31-47 held, 94-120 "
    "agent calls due meanwhile) and the drain is those calls' partitions catching up after the "
    "restart, 2.2-4.7 s (seeds 1-3), which the estimate's release over a critical path does "
    "not model.",
}
"""Scenarios whose drain the estimate does not model yet, with why (strict: an agreement there
fails the test, so that the entry is removed)."""


@pytest.mark.parametrize("name", with_known_gaps(SCENARIOS, NOT_YET_AGREEING))
def test_estimate_and_simulation_agree_on_the_drain(name: str) -> None:
    design = load_design(STEPS / "designs" / "reference.yaml")
    scenario = load_scenario(STEPS / "scenarios" / f"{name}.yaml")
    expected = estimate(design, scenario).drain_seconds
    drains = [simulate(design, scenario, seed).metrics.drain_seconds for seed in SEEDS]
    assert expected is not None and None not in drains, (name, expected, drains)
    simulated = mean(d for d in drains if d is not None)
    assert simulated == pytest.approx(expected, rel=TOLERANCE, abs=FLOOR_S), (
        f"{name}: simulated drain {simulated:.4g} s (seeds {SEEDS}: {drains}), "
        f"estimate {expected:.4g} s"
    )


def test_a_poison_stall_leaves_nothing_to_drain() -> None:
    """The estimate leaves poison out of the runs' recovery (a stall holds one partition's few
    events): 0 s. Wherever the simulation measures a drain (the poison scenario's stalls go on to
    the end of the window, see NOT_YET_AGREEING) it is within the floor of it."""
    design = load_design(STEPS / "designs" / "reference.yaml")
    scenario = load_scenario(STEPS / "scenarios" / "poison.yaml")
    assert estimate(design, scenario).drain_seconds == 0.0
    drains = [simulate(design, scenario, seed).metrics.drain_seconds for seed in SEEDS]
    measured = [d for d in drains if d is not None]
    assert len(measured) >= 2, drains
    assert max(measured) <= FLOOR_S, drains


def test_the_backlog_at_the_restart_is_rate_times_outage() -> None:
    """Every agent worker down 180 s at 10 model calls/s: 1,800 calls come due and wait, though
    the stalled runs produced few of them (the log's lag holds only each new run's first step)."""
    design = load_design(STEPS / "designs" / "reference.yaml")
    scenario = load_scenario(STEPS / "scenarios" / "worker-crash.yaml")
    assert estimate(design, scenario).by_group["agent"].backlog == pytest.approx(1800)
    for seed in SEEDS:
        m = simulate(design, scenario, seed).metrics
        assert m.backlog_at_restart == pytest.approx(1800, rel=0.03)
        assert m.by_group["agent"].backlog_peak == pytest.approx(1800, rel=0.05)
        assert m.lag_total_max < 0.5 * m.backlog_peak
