"""The worked sizing example (worked-numbers items 9 and 2) and the delivery micro-case (item 4),
simulated.

Item 9: 20 step events/s, 2.0 s per agent step, 48 partitions on 4 instances x 12, max.poll.records
50, commit after each batch, events spread evenly, every worker down for 180 s. Deterministic mode
(even arrivals, constant step times): backlog and drain time within 2 %.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from simulator import simulate
from simulator.design import Design
from simulator.engine import Workload
from simulator.result import Metrics
from simulator.scenario import Scenario
from simulator.simulation import run_workload

UNLIMITED_MODEL = {"rpm": 1_000_000, "tpm": 10_000_000_000, "max_concurrency": 10_000}


def worked_design(partitions: int = 48, dedupe: str = "durable_same_transaction") -> Design:
    """The seed's design: ``partitions`` partitions keyed so events spread evenly, 4 x 12."""
    return Design.model_validate(
        {
            "event_log": {"partitions": partitions, "partition_key": "event_id"},
            "delivery": {"commit": "after_processing", "dedupe": dedupe},
            "consumers": {
                "agent": {"instances": 4, "concurrency_per_instance": 12, "max_poll_records": 50}
            },
            "model": {"primary": UNLIMITED_MODEL},
        }
    )


def worked_scenario(outage_s: float = 180, duration_s: float = 1800) -> Scenario:
    """20 step events/s of 2.0 s agent steps, all agent workers down at 300 s for ``outage_s``."""
    return Scenario.model_validate(
        {
            "name": "worked-example",
            "duration_seconds": duration_s,
            "deterministic": True,
            "load": {
                "runs_per_second": None,
                "step_events_per_second": 20,
                "step_time": {"agent_step": {"distribution": "constant", "mean_seconds": 2.0}},
            },
            "faults": [
                {
                    "kind": "worker_crash",
                    "at_seconds": 300,
                    "duration_seconds": outage_s,
                    "instances": "all",
                }
            ],
        }
    )


@pytest.fixture(scope="module")
def worked() -> Metrics:
    return simulate(worked_design(), worked_scenario(), 7).metrics


def test_capacity_and_utilisation(worked: Metrics) -> None:
    """Capacity 48 / 2.0 = 24 events/s; utilisation 20 / 24 = 83.3 %."""
    assert worked.capacity_eps == pytest.approx(24.0, rel=1e-9)
    assert worked.utilisation == pytest.approx(20 / 24, rel=1e-4)
    assert worked.by_group["agent"].mean_step_s == pytest.approx(2.0)


def test_littles_law_in_flight() -> None:
    """Before the outage 20 x 2.0 = 40 events are in flight; none while every worker is down; all
    48 partitions are busy while the backlog drains."""
    result = simulate(worked_design(), worked_scenario(), 7)
    series = result.timeseries
    before = [n for t, n in zip(series.t_s, series.in_flight, strict=True) if 30 <= t < 300]
    down = [n for t, n in zip(series.t_s, series.in_flight, strict=True) if 310 <= t < 480]
    draining = [n for t, n in zip(series.t_s, series.in_flight, strict=True) if 500 <= t < 1300]
    assert sum(before) / len(before) == pytest.approx(40, rel=0.05)
    assert max(down) == 0
    assert min(draining) == 48
    assert result.metrics.by_group["agent"].busy_partitions_max == 48


def test_backlog_after_the_outage(worked: Metrics) -> None:
    """20 x 180 = 3,600 events behind when the workers come back (within 2 %)."""
    assert worked.backlog_peak == pytest.approx(3600, rel=0.02)


def test_drain_time(worked: Metrics) -> None:
    """3,600 / (24 - 20) = 900 s to drain (within 2 %)."""
    assert worked.drain_seconds is not None
    assert worked.drain_seconds == pytest.approx(900, rel=0.02)
    assert worked.drain_note is None


def test_restart_redelivers_at_most_one_batch_per_instance(worked: Metrics) -> None:
    """Commit after each batch: at most 4 x 50 = 200 events redelivered, none lost, no duplicate
    effect with durable dedupe; the restart is one rebalance."""
    assert 0 < worked.redelivered <= 200
    assert worked.lost == 0
    assert worked.duplicate_effects == 0
    assert worked.rebalances == 1
    # Everything is processed but the steps still running when the window closes.
    assert 0 <= worked.arrivals - worked.processed <= 48


def test_forty_partitions_never_drain() -> None:
    """40 / 2.0 = 20 events/s = arrivals: the backlog never drains."""
    m = simulate(worked_design(partitions=40), worked_scenario(), 7).metrics
    assert m.capacity_eps == pytest.approx(20.0)
    assert m.drain_seconds is None
    assert m.drain_note == "never drains: capacity 20.0/s = arrivals 20.0/s"
    assert m.backlog_peak == pytest.approx(3600, rel=0.02)


def test_without_dedupe_redelivered_steps_repeat_model_calls() -> None:
    """No dedupe: the redelivered steps are model calls paid again, bounded by 4 x 50."""
    m = simulate(worked_design(dedupe="none"), worked_scenario(), 7).metrics
    assert 0 < m.model_calls_repeated <= 200
    assert m.tokens_repeated == m.model_calls_repeated * (1500 + 300)
    assert m.model_calls == m.arrivals + m.model_calls_repeated


def test_lag_example_drain_rate() -> None:
    """Item 2's rate: arrivals 30/s against a group consuming 45/s drain a backlog at 15/s.

    30 step events/s of 1.0 s steps on 45 partitions (capacity 45/s); a 7 s outage leaves 210
    events behind, which drain in 210 / 15 = 14 s.
    """
    design = Design.model_validate(
        {
            "event_log": {"partitions": 45, "partition_key": "event_id"},
            "delivery": {"commit": "after_processing"},
            "consumers": {
                "agent": {"instances": 3, "concurrency_per_instance": 15, "max_poll_records": 45}
            },
            "model": {"primary": UNLIMITED_MODEL},
        }
    )
    scenario = Scenario.model_validate(
        {
            "name": "lag-example",
            "duration_seconds": 240,
            "deterministic": True,
            "load": {
                "runs_per_second": None,
                "step_events_per_second": 30,
                "step_time": {"agent_step": {"distribution": "constant", "mean_seconds": 1.0}},
            },
            "faults": [
                {
                    "kind": "worker_crash",
                    "at_seconds": 100,
                    "duration_seconds": 6,
                    "instances": "all",
                }
            ],
        }
    )
    m = simulate(design, scenario, 1).metrics
    assert m.capacity_eps == pytest.approx(45.0)
    # 6 s down plus the 1 s join: 7 s x 30 = 210 events, drained at 45 - 30 = 15/s: 14 s.
    assert m.backlog_peak == pytest.approx(210, rel=0.1)
    assert m.drain_seconds == pytest.approx(14, rel=0.1)


# ----------------------------------------------------------------------------- item 4


def micro_case(commit: str, dedupe: str) -> Metrics:
    """Item 4: a batch of offsets 100..104 and a crash after 3 are processed.

    One partition, one instance, max.poll.records 5. Offsets 0..99 arrive one a second and are
    processed and committed; offsets 100..104 arrive together at t = 200 and are fetched as one
    batch; each takes 1 s, so at t = 203.5 three are done and the fourth is running when the
    instance crashes. It restarts at 213.5 and reads again from the committed offset.
    """
    design = Design.model_validate(
        {
            "event_log": {"partitions": 1, "partition_key": "event_id"},
            "delivery": {"commit": commit, "dedupe": dedupe},
            "consumers": {
                "agent": {"instances": 1, "concurrency_per_instance": 1, "max_poll_records": 5}
            },
            "model": {"primary": UNLIMITED_MODEL},
        }
    )
    arrivals = [float(i) for i in range(100)] + [200.0] * 5
    steps = [0.5] * 100 + [1.0] * 5
    workload = Workload.from_arrays(300.0, agent=(arrivals, steps))
    crash: dict[str, Any] = {
        "kind": "worker_crash",
        "at_seconds": 203.5,
        "duration_seconds": 10,
        "instances": "all",
    }
    scenario = Scenario.model_validate({"name": "item-4", "faults": [crash]})
    return run_workload(design, scenario, workload, 1).metrics


def test_commit_after_with_durable_dedupe_rereads_five_skips_three_applies_two() -> None:
    m = micro_case("after_processing", "durable_same_transaction")
    assert m.redelivered == 5
    assert m.dedupe_skipped == 3
    assert m.duplicate_effects == 0
    assert m.lost == 0
    # Applied by the replacement: the two records not yet done (the fourth was cut mid-step).
    assert m.processed == 105
    assert m.redelivered - m.dedupe_skipped == 2


def test_commit_after_without_dedupe_applies_three_twice() -> None:
    m = micro_case("after_processing", "none")
    assert m.redelivered == 5
    assert m.dedupe_skipped == 0
    assert m.duplicate_effects == 3
    assert m.lost == 0


def test_in_memory_dedupe_is_lost_with_the_crashed_process() -> None:
    m = micro_case("after_processing", "in_memory")
    assert m.dedupe_skipped == 0
    assert m.duplicate_effects == 3


def test_commit_before_loses_two() -> None:
    """The replacement starts at 105: 105 - 103 = 2 records never processed."""
    m = micro_case("before_processing", "durable_same_transaction")
    assert m.lost == 2
    assert m.redelivered == 0
    assert m.duplicate_effects == 0
    assert m.processed == 103


def _steady(rate_eps: float, outage_s: float, duration_s: float) -> Scenario:
    scenario = worked_scenario(outage_s=outage_s, duration_s=duration_s)
    load = scenario.load.model_copy(update={"step_events_per_second": rate_eps})
    return scenario.model_copy(update={"load": load})


def test_backlog_at_restart_is_rate_times_outage() -> None:
    """Seed 000's lag arithmetic: 12 events/s and every worker down for 5 s leave 12 x 5 = 60
    events behind when the workers come back. The peak is larger: the backlog keeps growing
    while the restarted workers rejoin and start again."""
    m = simulate(worked_design(), _steady(12, 5, 600), 7).metrics
    assert m.backlog_at_restart == 60
    assert m.backlog_peak > m.backlog_at_restart


def test_backlog_at_restart_of_the_worked_example() -> None:
    """20 x 180 = 3,600 events behind at the restart, exactly."""
    assert simulate(worked_design(), worked_scenario(), 7).metrics.backlog_at_restart == 3600


def test_workers_still_down_at_the_end_read_so() -> None:
    """An outage that outlasts the window: no restart (backlog_at_restart None), no drain time,
    and the note says the workers are still down rather than guessing the time left."""
    m = simulate(worked_design(), worked_scenario(outage_s=2000), 7).metrics
    assert m.backlog_at_restart is None
    assert m.drain_seconds is None
    assert m.drain_note is not None
    assert m.drain_note.startswith("workers still down at the end of the window (until 2,300 s)")
    assert "more" not in m.drain_note


def test_a_poison_stall_on_at_the_end_reads_so() -> None:
    """The poison scenario at seed 3 ends with three stalls still on. With the reference they
    are ordinary stalls (the design gives each event up after its retries): no incident, drain
    0 s, the note counts them. Retried without a limit a stall never ends: the note says it is
    still on at the end, not "still draining ... about N s more" (a guess at a drain that cannot
    start)."""
    from simulator.files import load_design, load_scenario

    steps = Path(__file__).resolve().parents[2] / "steps"
    scenario = load_scenario(steps / "scenarios" / "poison.yaml")
    design = load_design(steps / "designs" / "reference.yaml")
    result = simulate(design, scenario, 3)
    m = result.metrics
    assert max(w.end_s for w in result.fault_windows) == result.duration_seconds
    assert m.drain_seconds == 0.0
    assert m.drain_note is not None
    assert m.drain_note.startswith("no incident: 27 poison stalls, each until the design gives")
    assert "3 still on at the end" in m.drain_note
    forever = load_design(steps / "designs" / "bad" / "unlimited-retry.yaml")
    m = simulate(forever, scenario, 3).metrics
    assert m.drain_seconds is None
    assert m.drain_note is not None
    assert m.drain_note.startswith(
        "a poison event still stalling its partition at the end of the window (until 480 s)"
    )
    assert m.drain_note.endswith("the lag cannot settle while it does")
