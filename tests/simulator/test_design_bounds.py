"""Design bounds that a broker enforces: a value outside is refused when the design is loaded,
with its file, line and field named."""

from __future__ import annotations

import pydantic
import pytest

from simulator.design import SESSION_TIMEOUT_MAX_MS, SESSION_TIMEOUT_MIN_MS, Design
from simulator.errors import InputFileError
from simulator.files import load_model

DESIGN = """version: 1
name: t
consumers:
  agent:
    session_timeout_ms: {value}
"""


@pytest.mark.parametrize("value", [45, 5_999, 1_800_001, 3_600_000])
def test_a_session_timeout_outside_kafkas_broker_bounds_is_refused_naming_the_field(
    value: int,
) -> None:
    with pytest.raises(InputFileError) as caught:
        load_model(Design, DESIGN.format(value=value), "design.yaml")
    message = str(caught.value)
    assert "consumers.agent.session_timeout_ms" in message
    assert message.startswith("design.yaml:5: ")


@pytest.mark.parametrize("value", [SESSION_TIMEOUT_MIN_MS, 45_000, SESSION_TIMEOUT_MAX_MS])
def test_a_session_timeout_within_the_broker_bounds_loads(value: int) -> None:
    design = load_model(Design, DESIGN.format(value=value), "design.yaml")
    assert design.consumers.agent.session_timeout_ms == value


def test_the_bounds_are_kafkas_broker_defaults() -> None:
    """group.min.session.timeout.ms 6 s and group.max.session.timeout.ms 30 min."""
    assert (SESSION_TIMEOUT_MIN_MS, SESSION_TIMEOUT_MAX_MS) == (6_000, 1_800_000)


def test_a_state_store_below_one_write_per_second_is_refused_naming_the_field():
    """5e-324 writes/s made a write take an infinite time and the simulation fail (a 500)."""
    with pytest.raises(pydantic.ValidationError) as caught:
        Design.model_validate({"state_store": {"write_capacity_per_second": 5e-324}})
    assert caught.value.errors()[0]["loc"] == ("state_store", "write_capacity_per_second")
    assert Design.model_validate({"state_store": {"write_capacity_per_second": 1}})
