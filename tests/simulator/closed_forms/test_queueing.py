"""Queueing theory: worked-numbers items 14-16 exactly, through the formulas the estimate uses
(Kingman's wait, exact for M/M/1 and M/D/1; Erlang C and the M/M/c wait)."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from simulator.closed_forms.queueing import (
    erlang_b,
    erlang_c,
    kingman_wait,
    mmc_wait_seconds,
    saturated,
    step_time_scv,
)
from simulator.scenario import StepTime

POISSON = 1.0
"""Squared coefficient of variation of Poisson arrivals (and of exponential service)."""
CONSTANT = 0.0


def test_item_14_mm1() -> None:
    # Arrivals 3/s, exponential service of mean 0.2 s: Wq = 0.3 s, W = Wq + 0.2 = 0.5 s.
    wq = kingman_wait(3, 0.2, POISSON, POISSON)
    assert wq == pytest.approx(0.3, abs=1e-12)
    assert wq + 0.2 == pytest.approx(0.5, abs=1e-12)
    assert kingman_wait(5, 0.2, POISSON, POISSON) == math.inf


def test_item_15_md1_is_half_mm1() -> None:
    # Arrivals 20/h, constant service of 1/30 h: Pollaczek-Khinchine with zero service variance.
    wq = kingman_wait(20, 1 / 30, POISSON, CONSTANT)
    assert round(wq, 4) == 0.0333
    assert wq == pytest.approx(kingman_wait(20, 1 / 30, POISSON, POISSON) / 2, rel=1e-12)
    # Evenly spaced arrivals and constant service never wait (D/D/1).
    assert kingman_wait(3, 0.2, CONSTANT, CONSTANT) == 0.0


def test_item_16_erlang_c() -> None:
    assert round(erlang_c(10, 14), 7) == 0.1741319
    assert erlang_c(2, 3) == pytest.approx(4 / 9, rel=1e-12)
    assert round(mmc_wait_seconds(0.2, 0.1, 3), 4) == 4.4444
    assert round(mmc_wait_seconds(0.2, 0.1, 4), 6) == 0.869565
    assert erlang_c(14, 14) == 1.0
    assert mmc_wait_seconds(1.4, 0.1, 14) == math.inf


def erlang_c_exact(a: int, c: int) -> float:
    """Erlang C from its textbook sum, in exact rational arithmetic."""
    term = Fraction(1)
    total = Fraction(0)
    for k in range(c):
        total += term
        term = term * a / (k + 1)
    top = term * Fraction(c, c - a)  # a^c / c! x c / (c - a)
    return float(top / (total + top))


def test_erlang_is_stable_for_large_pools() -> None:
    # a^c / c! overflows a float long before c = 1000; the recursion stays exact to 1e-12.
    assert erlang_c(900, 1000) == pytest.approx(erlang_c_exact(900, 1000), rel=1e-9)
    assert erlang_c(10, 14) == pytest.approx(erlang_c_exact(10, 14), rel=1e-12)
    assert 0 < erlang_b(900, 1000) < erlang_c(900, 1000) < 1


def test_saturation_allows_for_rounding() -> None:
    assert saturated(1.4 / 0.1 / 14)
    assert not saturated(0.999)


def test_step_time_variability() -> None:
    assert step_time_scv(StepTime(distribution="constant", mean_seconds=1)) == 0
    assert step_time_scv(StepTime(distribution="exponential", mean_seconds=1)) == 1
    lognormal = StepTime(distribution="lognormal", mean_seconds=1, sigma=0.5)
    assert step_time_scv(lognormal) == pytest.approx(math.exp(0.25) - 1)


def test_bad_arguments_raise() -> None:
    with pytest.raises(ValueError):
        kingman_wait(3, 0.0, POISSON, POISSON)
    with pytest.raises(ValueError):
        kingman_wait(3, 0.2, -1.0, POISSON)
    with pytest.raises(ValueError):
        erlang_c(2, 0)
