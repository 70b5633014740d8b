"""The fault figures' sentences follow the run's numbers: a crash whose survivors took over every
event that came due says so, never "0 events ... were due" beside a lag of hundreds."""

from __future__ import annotations

from app.web.results import FaultFigures
from app.web.templating import make_templates


def _render(make_settings, figures: FaultFigures) -> str:
    templates = make_templates(make_settings())
    return templates.env.get_template("_fault_figures.html").render(r={"fault": figures})


def _figures(backlog_at_restart: int | None, faults: tuple[str, ...]) -> FaultFigures:
    return FaultFigures(
        faults=faults,
        lost=0,
        duplicate_effects=0,
        tokens_repeated=0,
        drain_seconds=120.0,
        drain_note=None,
        backlog_at_restart=backlog_at_restart,
        backlog_peak=812,
        lag_total_max=285,
    )


def test_a_crash_the_survivors_covered_says_none_waited_and_names_the_faults(make_settings):
    html = _render(make_settings, _figures(0, ("provider outage", "worker crash")))
    assert "The survivors started every event of the crashed group" in html
    assert "0 events" not in html
    assert "peaked at 812 above normal under the faults" in html
    assert "so it peaked lower, at 285" in html


def test_a_crash_that_left_work_counts_it_with_agreeing_nouns(make_settings):
    one = _render(make_settings, _figures(1, ("worker crash",)))
    assert "1 event of the crashed group came due while its workers were down and was still" in one
    assert "under the fault." in one
    many = _render(make_settings, _figures(1480, ("worker crash",)))
    assert "1,480 events of the crashed group came due" in many
