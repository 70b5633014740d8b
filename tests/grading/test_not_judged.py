"""A field no step decides is judged and billed at the course's value, and the grade says so:
a file with no tool or state workers and no state-store replica passed every check (each step
took the reference's values) beside a bill with $0 of tool workers and no replica."""

from __future__ import annotations

from pathlib import Path

from app.course.step_design import course_design, undecided_differences
from app.grading.grader import grade, load_material
from app.grading.text import to_text
from simulator.files import load_design

STEPS = Path(__file__).resolve().parents[2] / "steps"


def test_fields_no_step_decides_are_listed_and_billed_at_the_courses_values() -> None:
    material = load_material(STEPS)
    reference = load_design(STEPS / "designs" / "reference.yaml")
    consumers = reference.consumers.model_copy(
        update={"tool": reference.consumers.tool.model_copy(update={"instances": 0})}
    )
    store = reference.state_store.model_copy(update={"replicas": 0})
    design = reference.model_copy(update={"consumers": consumers, "state_store": store})
    only = [s for s in material.loaded.steps if s.step is not None and s.step.id == "evening-peak"]
    assert grade(design, material, seed=1, only=only).not_judged == []
    result = grade(design, material, seed=1)
    assert result.not_judged == [
        "consumers.tool.instances: 0 in the file, 2 judged",
        "state_store.replicas: 0 in the file, 2 judged",
    ]
    assert result.cost is not None
    assert result.cost.by_component["workers_tool"] > 0
    assert result.cost.by_component["database_replicas"] > 0
    assert "consumers.tool.instances: 0 in the file, 2 judged" in to_text(result)
    judged = course_design(material.loaded, design)
    assert judged.state_store.replicas == 2 and judged.consumers.tool.instances == 2


def test_a_whole_number_is_quoted_as_the_file_writes_it() -> None:
    """The model keeps ``1`` ms as 1.0: the list says 1, as the file does, and 300000 judged."""
    material = load_material(STEPS)
    reference = load_design(STEPS / "designs" / "reference.yaml")
    tool = reference.consumers.tool.model_copy(update={"max_poll_interval_ms": 1.0})
    consumers = reference.consumers.model_copy(update={"tool": tool})
    design = reference.model_copy(update={"consumers": consumers})
    assert undecided_differences(material.loaded, design) == [
        "consumers.tool.max_poll_interval_ms: 1 in the file, 300000 judged"
    ]
