"""steps/README.md is the authoring guide: it documents every field of the step format, its step
table matches the course, and its coverage tables name real checks for every failure scenario and
common mistake of the source chapter."""

from __future__ import annotations

import re

import pytest
from pydantic import BaseModel

from app.course.content import LoadedCourse
from app.course.models import Check, Choice, Course, Decision, KnownBad, Step
from tests.course.conftest import STEPS_DIR

README = (STEPS_DIR / "README.md").read_text(encoding="utf-8")

SECTIONS: dict[type[BaseModel], str] = {
    Course: "## course.yaml",
    KnownBad: "### Known-bad entries",
    Step: "## step.yaml",
    Decision: "### Decisions",
    Choice: "### Choices",
    Check: "### Checks",
}

FAILURE_SCENARIOS = [
    "A worker crashes mid-batch",
    "Slow processing triggers a rebalance",
    "A poison message blocks a partition",
    "The outbox relay publishes twice",
    "A saga compensation fails",
    "An approval never arrives",
    "A consumer returns after its offset expired",
    "An orchestrator fans out too far",
]

COMMON_MISTAKES = [
    'Expecting "exactly-once" to hold end to end',
    "Committing the offset before the work",
    "A fresh idempotency key per retry",
    "Publishing after the database commit, outside it",
    "Writing compensations that are not idempotent, or cannot fail safely",
    "An unwatched dead-letter queue",
]


def _section(heading: str) -> str:
    """The README text from ``heading`` to the next heading of the same or a higher level."""
    level = heading.split(" ")[0]
    start = README.index(heading + "\n")
    rest = README[start + len(heading) :]
    stop = re.search(rf"^#{{1,{len(level)}}} ", rest, flags=re.MULTILINE)
    return rest[: stop.start()] if stop else rest


def _table_rows(text: str) -> dict[str, str]:
    """First cell -> second cell of every Markdown table row in ``text``."""
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) >= 2 and not set(cells[0]) <= set("-: "):
            rows[cells[0]] = cells[1]
    return rows


@pytest.mark.parametrize("model", list(SECTIONS), ids=lambda m: m.__name__)
def test_readme_documents_every_field(model: type[BaseModel]):
    documented = _table_rows(_section(SECTIONS[model]))
    for name, info in model.model_fields.items():
        yaml_name = info.alias or name
        assert f"`{yaml_name}`" in documented, f"{model.__name__}.{yaml_name} is not documented"
        assert documented[f"`{yaml_name}`"], f"{model.__name__}.{yaml_name} has no meaning"


def test_step_table_matches_the_course(course: LoadedCourse):
    rows = _table_rows(_section("## The steps"))
    for step in course.steps:
        assert step.step is not None
        line = next(r for r in README.splitlines() if r.startswith(f"| {step.number} | "))
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[1] == step.title
        assert int(cells[3]) == len(step.step.checks), f"step {step.number} check count"
    assert len(rows) == len(course.steps) + 1  # the header row


def _check_ids(course: LoadedCourse) -> set[str]:
    return {c.id for s in course.steps if s.step for c in s.step.checks}


@pytest.mark.parametrize(
    ("heading", "items"),
    [("failure scenario", FAILURE_SCENARIOS), ("common mistake", COMMON_MISTAKES)],
)
def test_every_scenario_and_mistake_is_caught_by_a_real_check(
    course: LoadedCourse, heading: str, items: list[str]
):
    text = _section("## What the checks catch")
    table = text[text.index(f"| {heading} |") :]
    rows = _table_rows(table.split("\n\n")[0])
    ids = _check_ids(course)
    for item in items:
        assert item in rows, f"{item!r} is not in the {heading} table"
        named = re.findall(r"`([a-z0-9-]+)`", rows[item])
        assert named, f"{item!r} names no check"
        assert set(named) <= ids, f"{item!r} names unknown checks {set(named) - ids}"
