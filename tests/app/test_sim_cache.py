"""The simulation cache: one row per design, scenario, seed and simulator version."""

from __future__ import annotations

from app.db import make_engine, make_sessionmaker, upgrade
from app.models import SimResult
from app.sim_cache import cache_key, cached, store
from simulator.design import Design
from simulator.result import Metrics, SimulationResult, Timeseries
from simulator.scenario import Scenario


def a_result(lost: int) -> SimulationResult:
    metrics = Metrics(
        arrivals=10,
        processed=10,
        throughput_eps=1,
        capacity_eps=2,
        utilisation=0.5,
        lag_total_max=0,
        backlog_peak=0,
        drain_seconds=None,
        drain_note="never drains",
        latency_p50_s=1,
        latency_p95_s=2,
        latency_p99_s=3,
        lost=lost,
    )
    series = Timeseries(
        interval_seconds=1,
        t_s=[0.0],
        lag_total=[0],
        lag_worst_partition=[0],
        arrivals_eps=[1.0],
        throughput_eps=[1.0],
        in_flight=[0],
        errors=[0],
    )
    return SimulationResult(
        simulator_version="1",
        scenario="peak",
        seed=7,
        duration_seconds=60,
        metrics=metrics,
        timeseries=series,
    )


def test_the_key_changes_with_design_scenario_and_seed():
    design, scenario = Design(), Scenario(name="peak")
    key = cache_key(design, "peak", scenario, 7)
    assert cache_key(Design(), "peak", Scenario(name="peak"), 7) == key
    other = design.model_copy(deep=True)
    other.event_log.partitions = 13
    assert cache_key(other, "peak", scenario, 7).design_hash != key.design_hash
    longer = Scenario(name="peak", duration_seconds=901)
    assert cache_key(design, "peak", longer, 7).scenario_hash != key.scenario_hash
    assert cache_key(design, "peak", scenario, 8) != key


def test_a_stored_result_comes_back_equal_and_a_second_store_keeps_the_first(database_url):
    upgrade(database_url)
    factory = make_sessionmaker(make_engine(database_url))
    key = cache_key(Design(), "peak", Scenario(name="peak"), 7)
    with factory() as session:
        assert cached(session, [key]) == {}
        store(session, key, a_result(lost=3))
        session.commit()
    with factory() as session:
        store(session, key, a_result(lost=99))
        session.commit()
        assert cached(session, [key]) == {key: a_result(lost=3)}
        assert len(list(session.scalars(SimResult.__table__.select()))) == 1


def test_recent_results_are_served_from_this_process_per_database(database_url):
    """A re-run reads the same key again: it comes from memory, without the table (shown by
    deleting the row behind it); another engine (another app) keeps its own."""
    upgrade(database_url)
    engine = make_engine(database_url)
    factory = make_sessionmaker(engine)
    key = cache_key(Design(name="recent"), "peak", Scenario(name="peak"), 7)
    with factory() as session:
        store(session, key, a_result(lost=5))
        session.commit()
        session.execute(SimResult.__table__.delete())
        session.commit()
        assert cached(session, [key]) == {key: a_result(lost=5)}
    with make_sessionmaker(make_engine(database_url))() as other:
        assert cached(other, [key]) == {}
