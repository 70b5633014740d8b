"""A step.yaml that does not load still tells the rest of the course what it decides and what its
checks are worth (app.course.outline), from its raw text."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app.course.choices import fields_set
from app.course.loader import load_course
from app.course.outline import read_outline
from app.course.step_design import decided_through, fields_known
from app.progress import max_points, points_known
from tests.factories import REPO_STEPS

STEP4 = REPO_STEPS / "04-exactly-once-effects" / "step.yaml"
STEP4_FIELDS = {"delivery.commit", "delivery.dedupe", "delivery.dedupe_key_retention_hours"}
STEP4_CHECKS = [
    ("crash-loses-nothing", 3),
    ("crash-no-duplicate-effect", 3),
    ("key-retention-covers-replay", 3),
]


def broken(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new, 1)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("minutes: 5\n", "minutes: [5\n"),  # the reviewer's typo: the whole file is not YAML
        ("    label: When the offset", "    label: [When the offset"),  # inside a decision
        ("    hint: Commit after", "    hint: [Commit after"),  # inside a check
        ("minutes: 5\n", "minutes: five\n"),  # YAML, but not a valid step
    ],
)
def test_a_typo_leaves_the_fields_and_the_checks_readable(old, new):
    outline = read_outline(broken(STEP4.read_text(), old, new))
    assert outline.id == "exactly-once-effects"
    assert outline.scenario == "instance-crash"
    assert outline.fields == STEP4_FIELDS
    assert outline.checks is not None
    assert [(c.id, c.points) for c in outline.checks] == STEP4_CHECKS
    assert outline.max_points == 9


def test_checks_whose_points_cannot_be_read_are_unknown_not_guessed():
    text = broken(STEP4.read_text(), "minutes: 5\n", "minutes: [5\n")
    outline = read_outline(broken(text, "    points: 3\n", "    points: [3\n"))
    assert outline.checks is None and outline.max_points is None
    assert outline.fields == STEP4_FIELDS


def test_every_course_step_reads_the_same_as_when_it_loads():
    course = load_course(REPO_STEPS)
    for loaded in course.steps:
        assert loaded.step is not None
        text = loaded.step_file.read_text()
        outline = read_outline(broken(text, "\nminutes:", "\nminutes: ["))
        assert outline.id == loaded.step.id
        assert outline.fields == {p for d in loaded.step.decisions for p in fields_set(d)}
        assert outline.checks is not None
        assert [(c.id, c.points) for c in outline.checks] == [
            (c.id, c.points) for c in loaded.step.checks
        ]


def test_a_broken_step_keeps_what_the_later_steps_judge(tmp_path: Path):
    """The later steps' design, and the course's points, are those of the intact course."""
    intact = load_course(REPO_STEPS)
    root = Path(shutil.copytree(REPO_STEPS, tmp_path / "steps"))
    step_file = root / "04-exactly-once-effects" / "step.yaml"
    step_file.write_text(broken(step_file.read_text(), "minutes: 5\n", "minutes: [5\n"))
    course = load_course(root)
    step4 = course.steps[3]
    assert not step4.available and step4.step is None
    assert (step4.slug, step4.title) == (intact.steps[3].slug, intact.steps[3].title)
    for before, after in zip(intact.steps, course.steps, strict=True):
        assert decided_through(course, after) == decided_through(intact, before), after.slug
        assert fields_known(course, after)
    assert (max_points(step4), points_known(step4)) == (9, True)
    assert sum(max_points(s) for s in course.steps) == sum(max_points(s) for s in intact.steps)


def test_a_step_whose_decisions_cannot_be_read_leaves_the_later_steps_unknown(tmp_path: Path):
    root = Path(shutil.copytree(REPO_STEPS, tmp_path / "steps"))
    step_file = root / "04-exactly-once-effects" / "step.yaml"
    step_file.write_text("{ this is not a step\n")
    course = load_course(root)
    assert [fields_known(course, s) for s in course.steps[2:5]] == [True, False, False]
    assert (max_points(course.steps[3]), points_known(course.steps[3])) == (0, False)
