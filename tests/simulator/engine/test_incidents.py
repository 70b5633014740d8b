"""Which fault windows the drain is read around (simulator.engine.metrics.incidents): a poison
stall the design ends is part of the steady state; one it never ends is an incident."""

from __future__ import annotations

import numpy as np

from simulator.engine.metrics import drain, incidents


def test_poison_stalls_the_design_ends_are_not_incidents() -> None:
    windows = [(20.0, 45.0, "poison"), (100.0, 130.0, "worker_crash"), (470.0, 480.0, "poison")]
    inc = incidents(windows, 480.0, poison_stalls_forever=False)
    assert inc.windows == [(100.0, 130.0)]
    assert inc.kinds == ["worker_crash"]
    assert inc.steady is not None
    assert inc.steady.startswith("2 poison stalls, each until the design gives its event up")
    assert "the longest 25 s; 1 still on at the end" in inc.steady


def test_a_stall_that_never_ends_is_an_incident_still_on() -> None:
    windows = [(20.0, 480.0, "poison"), (300.0, 480.0, "poison")]
    inc = incidents(windows, 480.0, poison_stalls_forever=True)
    assert inc.windows == [(20.0, 480.0), (300.0, 480.0)]
    assert inc.steady is None
    t = np.linspace(0.0, 480.0, 97)
    lag = t / 4.0  # a stalled partition's lag grows
    d = drain(t, lag, inc.windows, 20.0, 10.0, inc.kinds)
    assert d.drain_seconds is None
    assert d.note is not None and d.note.startswith("a poison event still stalling")


def test_without_an_incident_the_note_names_the_stalls() -> None:
    inc = incidents([(20.0, 45.0, "poison")], 480.0, poison_stalls_forever=False)
    t = np.linspace(0.0, 480.0, 97)
    lag = np.full(t.size, 7.0)
    d = drain(t, lag, inc.windows, 20.0, 10.0, inc.kinds, steady=inc.steady)
    assert d.drain_seconds == 0.0
    assert d.note == (
        "no incident: 1 poison stall, each until the design gives its event up (the longest "
        "25 s), are part of the steady state; lag stays near 7 events"
    )
