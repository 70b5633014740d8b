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
MORE_SEEDS: dict[str, tuple[int, ...]] = {"rewind": tuple(range(1, 11))}
"""Scenarios whose drain varies too much from seed to seed for a mean of three: the rewind's is
the busiest key's few events one after another (one run in flight at 0.02 step events/s), 3.6 to
32.6 s over seeds 1-10 (mean 18.1 s; seeds 1-3 alone 14.5 s). Its runs are light, so ten cost
little."""
TOLERANCE = 0.15
FLOOR_S = 3.0
"""Absolute slack for drains near zero: 3 s, one and a half model calls (the drain of a queue that
barely formed: a poison event's partition catching up)."""

SCENARIOS = sorted(p.stem for p in (STEPS / "scenarios").glob("*.yaml"))

NOT_YET_AGREEING: dict[str, str] = {}
"""Scenarios whose drain the estimate does not model yet, with why (strict: an agreement there
fails the test, so that the entry is removed)."""


@pytest.mark.parametrize("name", with_known_gaps(SCENARIOS, NOT_YET_AGREEING))
def test_estimate_and_simulation_agree_on_the_drain(name: str) -> None:
    design = load_design(STEPS / "designs" / "reference.yaml")
    scenario = load_scenario(STEPS / "scenarios" / f"{name}.yaml")
    expected = estimate(design, scenario).drain_seconds
    seeds = MORE_SEEDS.get(name, SEEDS)
    drains = [simulate(design, scenario, seed).metrics.drain_seconds for seed in seeds]
    assert expected is not None and None not in drains, (name, expected, drains)
    simulated = mean(d for d in drains if d is not None)
    assert simulated == pytest.approx(expected, rel=TOLERANCE, abs=FLOOR_S), (
        f"{name}: simulated drain {simulated:.4g} s (seeds {seeds}: {drains}), "
        f"estimate {expected:.4g} s"
    )


def test_a_poison_stall_leaves_nothing_to_drain() -> None:
    """A poison stall that the design ends (it gives the event up) is part of the poison
    scenario's steady state, not an incident: nothing to drain, 0 s in both, on every seed,
    whether or not a stall happens to be on at the end of the window (simulator.engine.metrics.
    incidents). A design that retries without a limit never drains, in both."""
    design = load_design(STEPS / "designs" / "reference.yaml")
    scenario = load_scenario(STEPS / "scenarios" / "poison.yaml")
    assert estimate(design, scenario).drain_seconds == 0.0
    for seed in SEEDS:
        m = simulate(design, scenario, seed).metrics
        assert m.drain_seconds == 0.0, (seed, m.drain_note)
        assert (
            m.drain_note is not None
            and "poison stalls, each until the design gives" in m.drain_note
        )
    forever = load_design(STEPS / "designs" / "bad" / "unlimited-retry.yaml")
    e = estimate(forever, scenario)
    assert e.drain_seconds is None
    assert e.drain_note is not None and "stalls for good" in e.drain_note
    m = simulate(forever, scenario, 1).metrics
    assert m.drain_seconds is None
    assert m.drain_note is not None
    assert m.drain_note.startswith("a poison event still stalling its partition at the end")


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


def test_a_partial_stall_holds_what_the_tasks_reach() -> None:
    """The saga's crash of one of the two tool workers for 30 s: a task stops when it reaches a
    tool call on a stalled partition, not at the crash (simulator.estimate.held). The tool
    events held at the restart, estimated, against the simulation's ``backlog_at_restart`` (the
    crashed group's backlog growth from crash to restart), mean of seeds 1-3, within 15 %; and
    the drain starts only once the restarted member has rejoined and done its queued calls."""
    design = load_design(STEPS / "designs" / "reference.yaml")
    scenario = load_scenario(STEPS / "scenarios" / "saga.yaml")
    e = estimate(design, scenario)
    held = e.by_group["tool"].backlog
    restarts = [simulate(design, scenario, seed).metrics.backlog_at_restart for seed in SEEDS]
    assert None not in restarts
    simulated = mean(r for r in restarts if r is not None)
    assert held == pytest.approx(simulated, rel=TOLERANCE), (held, restarts)
    # A run with a stalled key somewhere (97 % of them) is not a stalled run: far fewer agent
    # calls wait than the 290 that stopping those runs for the whole window would hold.
    assert 90 <= e.by_group["agent"].backlog <= 130
    assert e.drain_seconds is not None and e.drain_seconds >= 1.0
