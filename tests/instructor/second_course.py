"""The second course (tests/fixtures/second_course): its names and its designs, graded once."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from app.grading.grader import grade, load_material
from app.grading.result import StepResult
from simulator.files import load_design

SECOND_COURSE = Path(__file__).resolve().parents[1] / "fixtures" / "second_course"
COURSE_ID = "order-events"
STEPS = ("size-the-group", "commit-after-work", "park-poison-orders")

REFERENCE = "designs/reference.yaml"
FEW_PARTITIONS = "designs/bad/few-partitions.yaml"
COMMIT_FIRST = "designs/bad/commit-first.yaml"
NO_DEDUPE = "designs/bad/no-dedupe.yaml"
ENDLESS_RETRY = "designs/bad/endless-retry.yaml"


@cache
def graded(design_file: str) -> dict[str, StepResult]:
    """The second course's grade of one of its designs, by step id (graded once per process)."""
    material = load_material(SECOND_COURSE)
    result = grade(load_design(SECOND_COURSE / design_file), material)
    return {step.id: step for step in result.steps}
