"""The fault figures' sentences follow the run's numbers: a crash whose survivors took over every
event that came due says so, never "0 events ... were due" beside a lag of hundreds."""

from __future__ import annotations

from bs4 import BeautifulSoup

from app.web.losses import Losses, losses
from app.web.results import FaultFigures
from app.web.templating import make_templates
from simulator.result import Metrics


def _render(make_settings, figures: FaultFigures) -> str:
    templates = make_templates(make_settings())
    return templates.env.get_template("_fault_figures.html").render(r={"fault": figures})


def _tile(make_settings, figures: FaultFigures) -> BeautifulSoup:
    return BeautifulSoup(_render(make_settings, figures), "html.parser")


def _figures(
    backlog_at_restart: int | None, faults: tuple[str, ...], lost: Losses | None = None
) -> FaultFigures:
    return FaultFigures(
        faults=faults,
        losses=lost or Losses(()),
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


def test_the_events_lost_tile_counts_unpublished_next_events_and_says_so(make_settings):
    unpublished = losses(Metrics.model_construct(lost=0, publishes_lost=8))
    html = _tile(make_settings, _figures(None, ("worker crash",), unpublished))
    tile = html.select_one("#events-lost")
    assert tile.select_one("dd").get_text() == "8"
    assert "bad" in tile["class"]
    assert tile.select_one("#events-lost-caption").get_text() == "8 next events never published"


def test_the_events_lost_tile_counts_vanished_state_writes_beside_lost_events(make_settings):
    both = losses(
        Metrics.model_construct(lost=3, log_lost=2, state_writes_lost=27, state_writes_rebuilt=5)
    )
    assert both.total == 30
    html = _tile(make_settings, _figures(None, ("state-store failover",), both))
    tile = html.select_one("#events-lost")
    assert tile.select_one("dd").get_text() == "30"
    assert tile.select_one("#events-lost-caption").get_text() == (
        "2 acknowledged events lost with a broker; 1 event lost; "
        "27 acknowledged state writes vanished"
    )


def test_the_events_lost_tile_is_green_only_when_nothing_of_any_kind_was_lost(make_settings):
    nothing = losses(Metrics.model_construct(lost=0, publishes_lost=0, state_writes_lost=0))
    tile = _tile(make_settings, _figures(None, ("worker crash",), nothing))
    assert "good" in tile.select_one("#events-lost")["class"]
    assert tile.select_one("#events-lost dd").get_text() == "0"
