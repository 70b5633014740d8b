"""Step 1's start check says what the chosen status code means: 200 waits for the whole run
and its report, 201 answers once the run is recorded and its planner started."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.checks.explanations import render_explanation
from app.grading.grader import load_material
from simulator.design import Design

STEPS = Path(__file__).resolve().parents[2] / "steps"


@pytest.fixture(scope="module")
def async_start():
    step = load_material(STEPS).loaded.step("run-api")
    assert step is not None and step.step is not None
    (check,) = [c for c in step.step.checks if c.id == "async-start"]
    return check


def _fail(check, status: int) -> str:
    design = Design.model_validate({"api": {"start_status_code": status}})
    return render_explanation(check.fail_message, {"design": design})


def test_200_waits_for_the_whole_run(async_start):
    assert _fail(async_start, 200) == (
        "POST /runs answers 200 only when the whole run has finished, with its report, so a "
        "client or proxy times out first."
    )


def test_201_answers_once_the_run_is_recorded(async_start):
    text = _fail(async_start, 201)
    assert text.startswith("POST /runs answers 201 Created only once the run is recorded")
    assert "whole run" not in text
