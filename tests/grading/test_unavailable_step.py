"""A grade against a course with a step that does not load: exit 3 (the course's fault), and a
score that claims no full marks, counting the broken step's checks when its file still tells them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli import main
from tests.instructor.second_course import REFERENCE, SECOND_COURSE

runner = CliRunner()

STEP2 = "commit-after-work"
STEP2_CHECKS = ["restart-loses-nothing", "dedupe-durable", "warehouse-keyed"]


@pytest.fixture
def course(tmp_path: Path) -> Path:
    """A copy of the second course whose step 2 has a YAML typo (``minutes: [5``)."""
    root = Path(shutil.copytree(SECOND_COURSE, tmp_path / "second_course"))
    step_file = root / "02-commit-after-work" / "step.yaml"
    text = step_file.read_text()
    assert "minutes: 5\n" in text
    step_file.write_text(text.replace("minutes: 5\n", "minutes: [5\n"))
    return root


def grade_json(course: Path) -> tuple[int, dict]:
    outcome = runner.invoke(
        main,
        ["grade", str(SECOND_COURSE / REFERENCE), "--steps-dir", str(course), "--format", "json"],
    )
    return outcome.exit_code, json.loads(outcome.stdout)


def test_the_broken_steps_checks_are_named_and_counted(course):
    code, data = grade_json(course)
    assert code == 3
    assert data["status"] == "error"
    assert (data["points"], data["max_points"], data["score"]) == (20, 30, 0.6667)
    step = next(s for s in data["steps"] if s["id"] == STEP2)
    assert [c["id"] for c in step["checks"]] == STEP2_CHECKS
    assert {c["status"] for c in step["checks"]} == {"error"}
    assert (step["points"], step["max_points"]) == (0, 10)
    assert data["message"].startswith(
        "3 of 11 checks could not run: "
        + ", ".join(f"{STEP2}/{c}" for c in STEP2_CHECKS)
        + f"; step {STEP2} is unavailable ("
    )
    assert "YAML syntax" in data["message"]
    assert data["message"].endswith("20/30 points.")


def test_when_its_checks_cannot_be_read_the_score_is_unknown(course):
    step_file = course / "02-commit-after-work" / "step.yaml"
    step_file.write_text(step_file.read_text().replace("    points: 4\n", "    points: [4\n", 1))
    code, data = grade_json(course)
    assert code == 3
    assert data["score"] is None  # never 1.0 for 20/20 of what could be read
    assert (data["points"], data["max_points"]) == (20, 20)
    assert f"step {STEP2} is unavailable (" in data["message"]
    assert "its checks could not be read" in data["message"]
    assert data["message"].endswith(f"(the points of step {STEP2} are unknown).")
    text = runner.invoke(
        main, ["grade", str(SECOND_COURSE / REFERENCE), "--steps-dir", str(course)]
    ).stdout
    assert "Result: ERROR  20/20 points (score unknown)" in text
