"""steps/README.md's table of the steps is the course as it loads: a step's scenarios, its
checks and its points (design review in brackets). It went stale twice (a check added to step 13,
the rewind scenario), so it is compared here rather than trusted."""

from __future__ import annotations

import re
from pathlib import Path

from app.checks.kinds import check_kind
from app.course.loader import load_course

STEPS = Path(__file__).resolve().parents[2] / "steps"
ROW = re.compile(r"^\| (\d+) \| (.+?) \| (.+?) \| (\d+) \| (\d+) \((\d+)\) \|$")


def _rows() -> dict[int, tuple[str, tuple[str, frozenset[str]], int, int, int]]:
    """The table's rows by step number: title, (the step's scenario, the others its checks
    read, in any order), checks, points and design-review points."""
    text = (STEPS / "README.md").read_text()
    table = text.split("## The steps", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in table.splitlines():
        match = ROW.match(line.strip())
        if match:
            n, title, scenarios, checks, points, review = match.groups()
            first, *others = scenarios.split(", ")
            rows[int(n)] = (
                title,
                (first, frozenset(others)),
                int(checks),
                int(points),
                int(review),
            )
    return rows


def test_the_readmes_table_of_steps_is_the_course() -> None:
    course = load_course(STEPS)
    expected = {}
    for loaded in course.steps:
        step = loaded.step
        assert step is not None, loaded.problems
        scenarios: list[str] = [step.scenario] if step.scenario else []
        for check in step.checks:
            if check.scenario and check.scenario not in scenarios:
                scenarios.append(check.scenario)
        review = sum(c.points for c in step.checks if check_kind(c.expr) == "design_review")
        first, *others = scenarios or ["none"]
        expected[loaded.number] = (
            step.title,
            (first, frozenset(others)),
            len(step.checks),
            sum(c.points for c in step.checks),
            review,
        )
    assert _rows() == expected


def test_the_grading_docs_count_the_courses_points() -> None:
    """docs/grading.md's "This course: S of T points simulated, R design review"."""
    course = load_course(STEPS)
    checks = [c for loaded in course.steps if loaded.step for c in loaded.step.checks]
    total = sum(c.points for c in checks)
    review = sum(c.points for c in checks if check_kind(c.expr) == "design_review")
    text = " ".join((STEPS.parent / "docs" / "grading.md").read_text().split())
    wanted = f"This course: {total - review} of {total} points simulated, {review} design review."
    assert wanted in text
