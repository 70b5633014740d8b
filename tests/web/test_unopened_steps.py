"""A step page says which earlier steps the learner has not worked on yet and the values they
hold, since the step's estimate, simulation and bill use them (issue 15: one truth per page)."""

from __future__ import annotations

from app.grading.grader import load_material
from app.models import StepStatus
from app.progress import StepStanding
from app.web.step_views import numbers_text, unopened_decisions
from simulator.design import Design
from tests.factories import REPO_STEPS
from tests.web.html import soup
from tests.web.learner import step_form, words


def test_step_13_names_the_unopened_earlier_steps_and_their_values(client):
    page = soup(client.get("/steps/provider-outage"))
    note = page.select_one("#unopened-decisions")
    assert note is not None
    assert words(note.select_one("summary")).startswith("Steps 1-12 before this one")
    items = [words(li) for li in note.select("li")]
    numbers = [int(item.split()[1].rstrip(":")) for item in items]
    assert numbers == list(range(1, 13))
    (failover,) = [item for item in items if item.startswith("step 11")]
    assert failover.startswith("step 11 (still the starting design's): ")
    assert (
        "Promoting the replica: By hand, by whoever is on call; Time to promote: 600 s" in failover
    )


def test_a_saved_step_leaves_the_note(client):
    form = step_form(client, "state-failover", state_store__failover_seconds="20")
    saved = client.post("/steps/state-failover", data=form, follow_redirects=False)
    assert saved.status_code == 303
    page = soup(client.get("/steps/provider-outage"))
    items = [words(li) for li in page.select("#unopened-decisions li")]
    assert [int(item.split()[1].rstrip(":")) for item in items] == [*range(1, 11), 12]


def test_the_first_step_with_a_scenario_has_no_note_when_nothing_comes_before_it(client):
    page = soup(client.get("/steps/run-api"))
    assert page.select_one("#unopened-decisions") is None


def test_a_value_set_elsewhere_is_shown_and_not_called_the_starting_designs():
    """A design file loaded whole can hold values of a step never saved on its page."""
    material = load_material(REPO_STEPS)
    steps = {s.slug: s for s in material.loaded.steps}
    standing = {slug: StepStanding(StepStatus.not_started, 0, 0) for slug in steps}
    design = Design().model_copy(deep=True)
    design.state_store.failover_seconds = 20
    notes = unopened_decisions(material, steps["provider-outage"], design, standing)
    (failover,) = [n for n in notes if n[0] == 11]
    assert "Time to promote: 20 s" in failover[1] and failover[2] is False
    assert all(untouched for number, _, untouched in notes if number != 11)
    standing["state-failover"] = StepStanding(StepStatus.passed, 9, 9)
    assert 11 not in [
        n[0] for n in unopened_decisions(material, steps["provider-outage"], design, standing)
    ]


def test_step_numbers_read_as_ranges():
    assert numbers_text([1, 2, 3, 5, 7, 8]) == "1-3, 5 and 7-8"
    assert numbers_text([4]) == "4"
    assert numbers_text([2, 11]) == "2 and 11"
    assert numbers_text([]) == ""
