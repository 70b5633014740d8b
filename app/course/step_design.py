"""The design a step judges: the learner's decisions up to that step, the course's neutral values
for the rest (issue 15: a step judges only what has been decided by then).

Step ``k`` of a course sees, for every design field that steps ``1..k`` decide, the learner's
value, and for every other field (decided by a later step, or by no step) the course's reference
design's, which is sane everywhere. So a later step's default (a handful of partitions, no
fallback) never shows in an earlier step's numbers, and a design file graded in CI is judged step
by step exactly as in the browser. Without a reference design the learner's design is used whole.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from app.course.choices import fields_set
from app.course.content import LoadedCourse, LoadedStep
from simulator.design import Design


def step_fields(step: LoadedStep) -> frozenset[str] | None:
    """The dotted design fields ``step``'s decisions set; for a step whose step.yaml did not load,
    those still readable in it (app.course.outline); None when they cannot be read."""
    if step.step is not None:
        return frozenset(p for decision in step.step.decisions for p in fields_set(decision))
    if step.outline is not None:
        return step.outline.fields
    return None


def decided_through(course: LoadedCourse, step: LoadedStep) -> frozenset[str]:
    """Dotted design fields that steps ``1..step.number`` decide (made once per load). A step
    that did not load counts with the fields still readable in its file, so a typo in it does not
    change what the later steps judge (see :func:`fields_known`)."""
    key = f"step_design:decided:{step.slug}"
    if key not in course.derived:
        fields = {
            path
            for other in course.steps
            if other.number <= step.number
            for path in step_fields(other) or ()
        }
        course.derived[key] = frozenset(fields)
    decided: frozenset[str] = course.derived[key]
    return decided


def fields_known(course: LoadedCourse, step: LoadedStep) -> bool:
    """True when :func:`decided_through` is complete: the fields of every step ``1..step.number``
    could be read (False when one of them did not load and its decisions cannot be read)."""
    return all(step_fields(other) is not None for other in course.steps[: step.number])


def decided_later(course: LoadedCourse, step: LoadedStep) -> dict[int, list[str]]:
    """Fields a later step decides and this step takes from the reference, by step number (each
    field under the step that first decides it), for the page's note."""
    mine = decided_through(course, step)
    later: dict[int, list[str]] = {}
    for other in course.steps:
        if other.number <= step.number or other.step is None:
            continue
        for decision in other.step.decisions:
            if decision.field not in mine and all(
                decision.field not in fields for fields in later.values()
            ):
                later.setdefault(other.number, []).append(decision.field)
        mine = mine | {p for d in other.step.decisions for p in fields_set(d)}
    return later


def _set(tree: dict[str, Any], path: str, value: Any) -> None:
    *parents, leaf = path.split(".")
    node = tree
    for name in parents:
        node = node.setdefault(name, {})
    node[leaf] = value


def _get(tree: dict[str, Any], path: str) -> Any:
    node: Any = tree
    for name in path.split("."):
        node = node[name]
    return node


def step_design(course: LoadedCourse, step: LoadedStep, design: Design) -> Design:
    """The design ``step`` judges (see the module docstring). When the mix is not a valid design
    (a value of this step that needs one of a later step's), the learner's design is used whole,
    so its own field errors are what the learner sees."""
    neutral = course.reference_design
    if neutral is None:
        return design
    decided = decided_through(course, step)
    base = neutral.model_dump(mode="json")
    mine = design.model_dump(mode="json")
    for path in decided:
        try:
            _set(base, path, _get(mine, path))
        except (KeyError, TypeError):
            continue
    base["name"] = mine.get("name", base.get("name"))
    try:
        return Design.model_validate(base)
    except ValidationError:
        return design


def course_design(course: LoadedCourse, design: Design) -> Design:
    """The design the course judges as a whole: the last step's (every decision of the course is
    the learner's; a field no step decides is the reference's, as in every step). The bill of a
    grade and the downloaded design.yaml are this design, so what is priced and kept is what was
    judged."""
    return step_design(course, course.steps[-1], design) if course.steps else design


def _leaves(tree: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(tree, dict):
        out: dict[str, Any] = {}
        for key, value in tree.items():
            out.update(_leaves(value, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: tree}


def undecided_differences(course: LoadedCourse, design: Design) -> list[str]:
    """Fields of ``design`` no step of the course decides whose value differs from the one the
    course judges (the reference's), as ``"state_store.replicas: 0 in the file, 2 judged"``
    (values as JSON, whole numbers without ".0"), in field order; empty when they agree (a
    design.yaml downloaded from the report card holds the judged values)."""
    judged = _leaves(course_design(course, design).model_dump(mode="json"))
    mine = _leaves(design.model_dump(mode="json"))
    return [
        f"{path}: {_as_written(mine.get(path))} in the file, {_as_written(value)} judged"
        for path, value in judged.items()
        if path != "name" and mine.get(path) != value
    ]


def _as_written(value: Any) -> str:
    """A value as JSON, a whole float without its ".0" (the model keeps ``1`` ms as ``1.0``)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return json.dumps(value)
