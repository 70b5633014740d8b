"""The peers of benchmarks/simulator.py simulate the same M/M/c queue as ours, so comparing
their speeds is fair: Erlang's C formula is right, and the three mean waits agree with it."""

from __future__ import annotations

import sys

import pytest

from benchmarks.queue_peers import (
    QueueWorkload,
    ciw_missing,
    run_ciw,
    run_naive_simpy,
    run_ours,
)


def test_erlang_c_with_one_server_is_the_m_m_1_wait() -> None:
    """c = 1: W_q = rho / (mu - lambda) (Kleinrock, section 3.2)."""
    workload = QueueWorkload(arrivals_per_second=8, service_mean_seconds=0.1, servers=1)
    assert workload.erlang_c_wait_seconds() == pytest.approx(0.8 / (10 - 8))


def test_erlang_c_matches_the_m_m_3_worked_by_hand() -> None:
    """lambda = 2, mu = 1, c = 3: a = 2, P0 = 1 / (1 + 2 + 2 + (8/6) / (1/3)) = 1/9,
    C = (8/6) / (1/3) * P0 = 4/9, W_q = C / (c mu - lambda) = 4/9."""
    workload = QueueWorkload(arrivals_per_second=2, service_mean_seconds=1.0, servers=3)
    assert workload.erlang_c_wait_seconds() == pytest.approx(4 / 9)


def test_a_saturated_queue_has_no_steady_state_wait() -> None:
    saturated = QueueWorkload(arrivals_per_second=20, service_mean_seconds=0.1, servers=2)
    with pytest.raises(ZeroDivisionError, match="utilisation 1.00"):
        saturated.erlang_c_wait_seconds()


SHORT = QueueWorkload(
    arrivals_per_second=200,
    service_mean_seconds=0.1,
    servers=24,
    partitions=256,
    duration_seconds=120,
)
"""Utilisation 0.83, 24,000 step events: each peer runs in a second or two."""


@pytest.mark.parametrize("run", [run_ours, run_naive_simpy, run_ciw], ids=lambda r: r.__name__)
def test_each_peer_s_mean_wait_agrees_with_erlang_c(run) -> None:
    """Within 35 % of the steady-state mean wait over 120 simulated seconds (one seed, started
    empty: seeds 1-3 fall within 25 % for each peer), and every offered event counted."""
    if run is run_ciw and ciw_missing() is not None:
        pytest.skip("Ciw is not installed (pip install -e '.[bench]')")
    peer = run(SHORT)
    assert peer.events == pytest.approx(SHORT.arrivals_per_second * 120, rel=0.03)
    assert peer.wait_mean_seconds == pytest.approx(SHORT.erlang_c_wait_seconds(), rel=0.35)


def test_without_ciw_the_benchmark_says_how_to_install_it(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "ciw", None)  # import ciw then raises ImportError
    assert ciw_missing() == (
        "Ciw: skipped, not installed (a benchmark extra: pip install -e '.[bench]')"
    )
