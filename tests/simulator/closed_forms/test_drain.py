"""Little's law, utilisation, backlog and drain: worked-numbers items 2 and 9 exactly."""

from __future__ import annotations

import math

import pytest

from simulator.closed_forms.drain import (
    backlog_after_outage,
    backlog_per_partition,
    drain_seconds,
    little_in_flight,
    never_drains_note,
    utilisation,
)


def test_item_2_lag_drains_at_capacity_minus_arrivals() -> None:
    # Lag 50 + 0 + 160 = 210 events, capacity 45/s, arrivals 30/s.
    assert drain_seconds(210, capacity=45, arrivals_eps=30) == 14


def test_item_9_in_flight_utilisation_backlog_and_drain() -> None:
    assert little_in_flight(20, 2.0) == 40
    assert round(utilisation(20, 24), 4) == 0.8333
    backlog = backlog_after_outage(20, 180)
    assert backlog == 3600
    assert backlog_per_partition(backlog, 48) == 75
    assert drain_seconds(backlog, 24, 20) == 900
    assert drain_seconds(backlog, 20, 20) is None


def test_drain_edge_cases() -> None:
    assert drain_seconds(0, 10, 20) == 0.0
    assert drain_seconds(100, 20, 20) is None
    assert drain_seconds(100, 19, 20) is None
    with pytest.raises(ValueError):
        drain_seconds(-1, 10, 5)
    assert backlog_after_outage(20, 180, capacity_during=15) == 900
    assert backlog_after_outage(20, 180, capacity_during=25) == 0
    assert utilisation(0, 0) == 0.0
    assert utilisation(5, 0) == math.inf


def test_bad_arguments_raise() -> None:
    with pytest.raises(ValueError):
        little_in_flight(-1, 2.0)
    with pytest.raises(ValueError):
        backlog_after_outage(20, -1)
    with pytest.raises(ValueError):
        backlog_per_partition(100, 0)


def test_never_drains_note_names_capacity_and_arrivals() -> None:
    note = never_drains_note(20, 20)
    assert note.startswith("Never drains: capacity 20 events/s")
    assert "arrivals 20 events/s" in note
