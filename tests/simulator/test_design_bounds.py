"""The design model's bounds keep every simulated time finite."""

from __future__ import annotations

import pydantic
import pytest

from simulator.design import Design


def test_a_state_store_below_one_write_per_second_is_refused_naming_the_field():
    """5e-324 writes/s made a write take an infinite time and the simulation fail (a 500)."""
    with pytest.raises(pydantic.ValidationError) as caught:
        Design.model_validate({"state_store": {"write_capacity_per_second": 5e-324}})
    assert caught.value.errors()[0]["loc"] == ("state_store", "write_capacity_per_second")
    assert Design.model_validate({"state_store": {"write_capacity_per_second": 1}})
