"""Cases where the estimate does not model the simulation yet, kept visible in the agreement tests
as strict expected failures: an agreement there fails the test, so the entry gets removed."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pytest


def with_known_gaps(names: Iterable[str], gaps: Mapping[str, str]) -> list[object]:
    """``names`` as pytest parameters, each one in ``gaps`` marked a strict xfail (on an
    AssertionError only) whose reason is its entry: why the estimate disagrees there."""
    return [
        pytest.param(n, marks=pytest.mark.xfail(strict=True, raises=AssertionError, reason=gaps[n]))
        if n in gaps
        else n
        for n in names
    ]
