"""Dotted design paths resolve to typed fields; form strings become valid design values."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from app.course.design_fields import UnknownField, design_field, get_value, with_values
from simulator.design import Design


def test_number_field_carries_its_bounds():
    spec = design_field("event_log.partitions")
    assert (spec.kind, spec.minimum, spec.maximum) == ("int", 1.0, 4096.0)


def test_enum_and_literal_fields_list_their_choices():
    assert design_field("delivery.commit").choices == [
        "after_processing",
        "before_processing",
        "auto",
        "in_effect_transaction",
    ]
    spec = design_field("api.start_status_code")
    assert spec.kind == "choice" and spec.coerce("202") == 202


def test_optional_number_takes_blank_as_none():
    spec = design_field("orchestration.max_subagents")
    assert spec.optional and spec.coerce("") is None and spec.coerce("8") == 8


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("event_log.shards", "has no field 'event_log.shards'"),
        ("event_log", "is a section"),
        ("event_log.partitions.x", "'event_log.partitions' is a value"),
    ],
)
def test_bad_paths_say_why(path, reason):
    with pytest.raises(UnknownField, match=reason):
        design_field(path)


def test_with_values_sets_nested_fields_and_validates_the_whole_design():
    design = with_values(
        Design(), {"consumers.agent.instances": 6, "delivery.commit": "after_processing"}
    )
    assert get_value(design, "consumers.agent.instances") == 6
    assert get_value(design, "delivery.commit") == "after_processing"
    with pytest.raises(ValidationError, match="min_insync_replicas"):
        with_values(Design(), {"event_log.min_insync_replicas": 3})


@pytest.mark.parametrize(
    ("path", "raw", "message"),
    [
        (
            "event_log.partitions",
            "eight",
            "Enter a whole number (digits only, no separators); got 'eight'.",
        ),
        ("event_log.partitions", "1,000", "got '1,000'"),
        ("event_log.partitions", "", "the field is empty"),
        ("event_log.partitions", "inf", "'inf' is not a finite value"),
        ("state_store.failover_seconds", "lots", "Enter a number (digits only"),
    ],
)
def test_a_number_field_refuses_text_in_the_learners_words(path, raw, message):
    """Not Python's "could not convert string to float"."""
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")) as err:
        design_field(path).coerce(raw)
    assert "convert" not in str(err.value)
