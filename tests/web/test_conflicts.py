"""A stale tab's values against the saved design: what differs, shown in the learner's words,
and the choices applied (app.web.conflicts)."""

from __future__ import annotations

import yaml

from app.course.models import Step
from app.web.conflicts import CONFLICT_FIELDS, differences, resolve
from simulator.design import Design
from tests.factories import DECIDING_STEP

STEP = Step.model_validate(yaml.safe_load(DECIDING_STEP))


def saved_design() -> Design:
    design = Design()
    design.delivery.dedupe = "durable_same_transaction"  # type: ignore[assignment]
    design.model.cache.enabled = True
    return design


def this_tab() -> dict[str, str]:
    """This tab: partitions as saved, dedupe none, the cache checkbox unticked (absent)."""
    saved = saved_design()
    return {
        "delivery.commit": saved.delivery.commit.value,
        "event_log.partitions": str(saved.event_log.partitions),
        "delivery.dedupe": "none",
    }


def test_differences_name_each_value_in_the_learners_words():
    found = differences(STEP, this_tab(), saved_design())
    assert [(d.label, d.mine, d.saved, d.chosen) for d in found] == [
        ("Dedupe", "None", "Durable, same transaction", ""),
        ("Response cache", "off", "on", ""),
    ]


def test_choosing_saved_for_all_takes_every_listed_value_from_the_saved_design():
    form = {**this_tab(), CONFLICT_FIELDS: "delivery.dedupe model.cache.enabled"}
    resolution = resolve(STEP, {**form, "keep_all": "saved"}, saved_design())
    assert resolution.unchosen == ()
    assert resolution.form["delivery.dedupe"] == "durable_same_transaction"
    assert resolution.form["model.cache.enabled"] == "true"


def test_a_field_left_unchosen_is_reported_and_one_not_listed_keeps_this_tabs_value():
    form = {**this_tab(), CONFLICT_FIELDS: "delivery.dedupe", "keep:model.cache.enabled": ""}
    resolution = resolve(STEP, form, saved_design())
    assert [d.field for d in resolution.unchosen] == ["delivery.dedupe"]
    assert "model.cache.enabled" not in resolution.form
