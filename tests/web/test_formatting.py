"""Numbers as the learner reads them."""

from __future__ import annotations

import pytest

from app.web.formatting import (
    count,
    drain,
    duration,
    eps,
    level,
    percent,
    usd,
    usd_short,
    utilisation,
)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0 s"), (45.4, "45 s"), (300, "5 min"), (370, "6 min 10 s"), (7200, "2 h"),
     (5430, "1 h 30 min"), (None, "never")],
)  # fmt: skip
def test_durations_read_in_the_largest_sensible_unit(seconds, text):
    assert duration(seconds) == text


def test_money_rates_and_shares():
    assert usd(72938.43) == "$72,938"
    assert usd_short(72938.43) == "$72.9k"
    assert usd_short(85000) == "$85k"
    assert usd_short(907.2) == "$907"
    assert eps(16) == "16.0/s"
    assert percent(0.625) == "62 %"
    assert count(1234.4) == "1,234"
    assert count(None) == "–"


@pytest.mark.parametrize(
    ("utilisation", "band"),
    [(0.0, "ok"), (0.69, "ok"), (0.7, "high"), (0.89, "high"), (0.9, "saturated"),
     (6.2, "saturated"), (None, "unknown")],
)  # fmt: skip
def test_utilisation_bands_are_ok_high_and_saturated(utilisation, band):
    assert level(utilisation) == band


def test_a_backlog_that_never_drains_differs_from_one_still_draining_when_the_run_ended():
    assert drain(323.4, None) == "5 min 23 s"
    assert drain(None, "never drains: capacity 4.0/s < arrivals 25.0/s") == "never"
    still = "still draining at the end of the window: 77 events above normal"
    assert drain(None, still) == "still draining at the end"


def test_workers_still_down_at_the_end_read_so_not_still_draining():
    note = "workers still down at the end of the window (until 2,300 s): 29,999 events above normal"
    assert drain(None, note) == "workers still down at the end"


def test_a_group_with_no_capacity_reads_no_capacity_not_a_percentage():
    assert utilisation(1000.0, 0.0) == "no capacity"
    assert utilisation(0.432, 23.1) == "43 %"
