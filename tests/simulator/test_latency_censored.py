"""Latency percentiles count the events still waiting at the end (engine/metrics.py): a backlog
left at the end raises them instead of vanishing from them, and the result says how many were
censored."""

from __future__ import annotations

import numpy as np
import pytest

from simulator import simulate
from simulator.engine.metrics import censored_latencies
from tests.simulator.test_worked_example import worked_design, worked_scenario


def test_censored_latency_is_the_wait_so_far_of_events_neither_finished_nor_given_up() -> None:
    """Arrived at 1, 2, 3, 4, 5 s; the end is 10 s. Finished at 3 s (done), at 12 s (still
    running: waiting 8 s), never but given up (lost: not waiting), never (waiting 6 s); the last
    arrives after the end (not counted)."""
    arrivals = np.array([1.0, 2.0, 3.0, 4.0, 11.0])
    finishes = np.array([3.0, 12.0, np.nan, np.nan, np.nan])
    settled = np.array([True, True, True, False, False])
    assert censored_latencies(arrivals, finishes, settled, 10.0).tolist() == [8.0, 6.0]


def test_a_backlog_left_at_the_end_raises_the_percentiles() -> None:
    """Every worker down from 300 s to past the end: about 20 x 1,500 events still wait. Their
    waits (up to 1,500 s) make the p95 far above the 2 s step time, and the result says how many
    were censored."""
    m = simulate(worked_design(), worked_scenario(outage_s=2000), 7).metrics
    assert m.latency_censored == m.arrivals - m.processed - m.lost - m.dead_lettered
    assert m.latency_censored == pytest.approx(20 * 1500, rel=0.01)
    assert m.latency_p95_s > 1000
    assert m.by_group["agent"].latency_censored == m.latency_censored


def test_zero_agent_instances_wait_the_whole_window() -> None:
    """No agent instance: nothing is processed, every event waits; the agent p95 is about 95 %
    of the 600 s window, not 0.00 s."""
    design = worked_design().model_copy(deep=True)
    design.consumers.agent.instances = 0
    m = simulate(design, worked_scenario(outage_s=60, duration_s=600), 7).metrics
    agent = m.by_group["agent"]
    assert agent.processed == 0
    assert agent.latency_censored == agent.arrivals
    assert agent.latency_p95_s == pytest.approx(0.95 * 600, rel=0.02)
