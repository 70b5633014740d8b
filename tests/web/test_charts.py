"""Chart specs and their text summaries: units, fault windows, the drain marker, the budget."""

from __future__ import annotations

from app.web.charts import cost_chart, drain_time_s, lag_chart, throughput_chart
from simulator.result import Cost, FaultWindow, GroupMetrics, Metrics, SimulationResult, Timeseries


def result(drain: float | None, windows: list[FaultWindow]) -> SimulationResult:
    metrics = Metrics(
        arrivals=100,
        processed=90,
        throughput_eps=9.0,
        capacity_eps=16.0,
        utilisation=0.62,
        lag_total_max=1800,
        backlog_peak=1800,
        drain_seconds=drain,
        drain_note=None if drain is not None else "never drains: capacity 4.0/s < arrivals 10/s",
        latency_p50_s=2.0,
        latency_p95_s=4.0,
        latency_p99_s=6.0,
    )
    series = Timeseries(
        interval_seconds=60,
        t_s=[0, 60, 120, 180, 240],
        lag_total=[0, 600, 1800, 900, 0],
        lag_worst_partition=[0, 20, 70, 30, 0],
        arrivals_eps=[10, 10, 10, 10, 10],
        throughput_eps=[10, 0, 0, 25, 10],
        in_flight=[20, 0, 0, 30, 20],
        errors=[0, 0, 0, 0, 0],
    )
    return SimulationResult(
        simulator_version="test",
        scenario="worker-crash",
        seed=7,
        duration_seconds=240,
        metrics=metrics,
        timeseries=series,
        fault_windows=windows,
    )


CRASH = [FaultWindow(kind="worker_crash", start_s=60, end_s=120)]


def test_the_drain_is_marked_where_lag_is_back_to_normal_after_the_fault():
    run = result(90.0, CRASH)
    assert drain_time_s(run) == 210.0
    chart = lag_chart(run)
    assert chart.spec["markers"] == [{"label": "drained", "x": 210.0}]
    assert chart.spec["windows"] == [{"label": "worker crash", "start": 60, "end": 120}]
    assert chart.spec["series"][0]["data"] == [0, 600, 1800, 900, 0]
    assert chart.summary == (
        "Total lag peaked at 1,800 step events at 2 min; the worst partition at 70. "
        "Worker crash from 1 min to 2 min (shaded). "
        "Lag was back to normal 1 min 30 s after the fault ended, at 3 min 30 s (marked)."
    )


def test_a_backlog_that_never_drains_is_said_and_not_marked():
    chart = lag_chart(result(None, CRASH))
    assert chart.spec["markers"] == []
    assert chart.summary.endswith(
        "Lag had not drained by the end of the run (never drains: capacity 4.0/s < arrivals 10/s)."
    )


def test_without_a_fault_nothing_is_shaded_or_marked():
    run = result(0.0, [])
    assert drain_time_s(run) is None
    chart = lag_chart(run)
    assert (chart.spec["windows"], chart.spec["markers"]) == ([], [])


def test_throughput_against_arrivals_names_the_dip():
    chart = throughput_chart(result(90.0, CRASH))
    assert [s["label"] for s in chart.spec["series"]] == ["arrivals", "throughput"]
    assert chart.spec["y"]["label"] == "step events per second"
    assert chart.summary == (
        "Arrivals averaged 10.0/s and throughput 9.0/s (all consumer groups together), lowest "
        "0.0/s at 1 min; capacity of the bottleneck group 16.0/s."
    )


def test_throughput_names_the_busiest_group_and_its_own_capacity():
    run = result(90.0, CRASH)
    busy = GroupMetrics(
        arrivals=100, processed=100, capacity_eps=23.1, utilisation=0.432, lag_total_max=0,
        busy_partitions_max=0, instances_alive_min=0,
    )  # fmt: skip
    idle = busy.model_copy(update={"capacity_eps": 1000.0, "utilisation": 0.02})
    by_group = {"agent": busy, "state": idle}
    run = run.model_copy(update={"metrics": run.metrics.model_copy(update={"by_group": by_group})})
    assert throughput_chart(run).summary.endswith(
        "; the busiest group, agent, can take 23.1/s (the load offered is 43 % of it)."
    )


def test_cost_bars_are_largest_first_without_free_components_and_mark_the_budget():
    cost = Cost(
        monthly_usd=90_000,
        budget_usd=85_000,
        by_component={"brokers": 900, "model_tokens": 89_100, "repeats_deploys": 0},
    )
    chart = cost_chart(cost)
    assert chart.spec["labels"] == ["model tokens", "brokers"]
    assert chart.spec["series"][0]["data"] == [89_100, 900]
    assert chart.spec["markers"] == [{"label": "budget $85,000", "x": 85_000}]
    assert chart.summary == (
        "Monthly cost $90,000 against a budget of $85,000 (106 %, over budget). "
        "Largest: model tokens $89,100, brokers $900."
    )


def test_repeated_windows_of_one_fault_read_once_with_their_count_and_span():
    stalls = [
        FaultWindow(kind="poison", start_s=s, end_s=e)
        for s, e in ((348, 480), (363, 480), (398, 480))
    ]
    windows = [FaultWindow(kind="worker_crash", start_s=60, end_s=120), *stalls]
    summary = lag_chart(result(None, windows)).summary
    assert (
        "Worker crash from 1 min to 2 min (shaded); poison message 3 times, between 5 min 48 s and"
        in summary
    )
    assert summary.count("poison message") == 1
