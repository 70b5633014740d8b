"""Two tabs saving the same learner's design: the second save is refused with a clear message,
keeps what was typed in it, and leaves the first tab's save in place (the version check)."""

from __future__ import annotations

import pytest

from tests.crash.learners import FIELD, STEP, form_fields
from tests.web.html import soup

pytestmark = pytest.mark.usefixtures("database_url")


def open_tab(client) -> dict[str, str]:
    return form_fields(client.get(f"/steps/{STEP}").text)


def save(client, form: dict[str, str], partitions: int, htmx: bool = True):
    headers = {"HX-Request": "true"} if htmx else {}
    return client.post(
        f"/steps/{STEP}", data={**form, FIELD: str(partitions)}, headers=headers,
        follow_redirects=False,
    )  # fmt: skip


@pytest.fixture
def learner(client):
    """A learner with a saved design (version 1, 24 partitions) and two tabs open on it."""
    assert save(client, open_tab(client), 24).status_code == 200
    return client


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "no-javascript"])
def test_the_second_tab_gets_a_conflict_and_keeps_its_input(learner, htmx):
    first, second = open_tab(learner), open_tab(learner)
    assert first["design_version"] == second["design_version"] == "1"
    assert save(learner, first, 48, htmx).status_code in (200, 303)

    refused = save(learner, second, 96, htmx)
    assert refused.status_code == 409
    kept = form_fields(refused.text)
    assert kept[FIELD] == "96"
    alert = soup(refused).select_one("#decisions [role=alert]").get_text(" ", strip=True)
    assert "another tab" in alert and "version 2" in alert and "not saved yet" in alert

    now = open_tab(learner)
    assert (now["design_version"], now[FIELD]) == ("2", "48")


def differing(response) -> list[tuple[str, str, str]]:
    """The refused form's list of differing values: (field, this tab's, saved)."""
    return [
        (tr["data-field"], tr.select_one(".mine").get_text(strip=True),
         tr.select_one(".theirs").get_text(strip=True))
        for tr in soup(response).select("#conflicts tbody tr")
    ]  # fmt: skip


def test_the_refused_form_lists_only_the_values_that_differ_with_both_values(learner):
    first, second = open_tab(learner), open_tab(learner)
    save(learner, first, 48)
    refused = save(learner, second, 96)
    assert differing(refused) == [(FIELD, "96", "48")]
    assert form_fields(refused.text)["conflict_fields"] == FIELD


def test_saving_again_without_choosing_is_refused_and_names_the_field(learner):
    first, second = open_tab(learner), open_tab(learner)
    save(learner, first, 48)
    kept = form_fields(save(learner, second, 96).text)
    again = save(learner, kept, 96)
    assert again.status_code == 409
    alert = soup(again).select_one("#decisions [role=alert]").get_text(" ", strip=True)
    assert "Partitions per topic" in alert and "Choose for each" in alert
    now = open_tab(learner)
    assert (now["design_version"], now[FIELD]) == ("2", "48")


@pytest.mark.parametrize(
    ("choice", "kept_partitions"),
    [
        ({f"keep:{FIELD}": "mine"}, "96"),
        ({f"keep:{FIELD}": "saved"}, "48"),
        ({"keep_all": "mine"}, "96"),
        ({"keep_all": "saved"}, "48"),
    ],
    ids=["field-mine", "field-saved", "all-mine", "all-saved"],
)
def test_the_learner_chooses_per_field_or_for_all_which_value_to_keep(
    learner, choice, kept_partitions
):
    first, second = open_tab(learner), open_tab(learner)
    save(learner, first, 48)
    kept = form_fields(save(learner, second, 96).text)
    assert save(learner, {**kept, **choice}, 96).status_code == 200
    now = open_tab(learner)
    assert now[FIELD] == kept_partitions
    assert "conflict_fields" not in now


def test_without_javascript_the_choice_is_the_same_form_posted_again(learner):
    first, second = open_tab(learner), open_tab(learner)
    save(learner, first, 48, htmx=False)
    refused = save(learner, second, 96, htmx=False)
    assert refused.status_code == 409
    kept = form_fields(refused.text)
    assert save(learner, {**kept, "keep_all": "saved"}, 96, htmx=False).status_code == 303
    assert open_tab(learner)[FIELD] == "48"
