"""Golden tests of the course in steps/: the reference design earns full marks, its JSON equals
the stored golden file, and another process grades it to the same bytes. (That each known-bad
design fails exactly its checks is tests/course/test_selftest.py, through the same
app.grading.selftest.self_test, so the suite grades each design once.)

Regenerate the golden file after a deliberate change to the course, the pricing or the
simulator (then review the diff; see tests/grading/golden/README.md):

    .venv/bin/designlab grade steps/designs/reference.yaml --format json \\
        --out tests/grading/golden/reference.json
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.grading.grader import grade, load_material
from app.grading.reports import to_json
from simulator.files import load_design

REPO = Path(__file__).resolve().parents[2]
STEPS = REPO / "steps"
GOLDEN = Path(__file__).parent / "golden" / "reference.json"


@pytest.fixture(scope="module")
def reference():
    material = load_material(STEPS)
    return grade(load_design(STEPS / material.course.reference_design), material)


def test_reference_passes_with_full_marks(reference):
    """Every check of every step passes: status pass, score 1."""
    failed = [f"{s}/{c}" for s, c in reference.failed_checks]
    assert failed == [], reference.message
    assert (reference.status, reference.score) == ("pass", 1.0)
    assert reference.points == reference.max_points > 0


def test_reference_leaves_budget_headroom(reference):
    """The reference's month costs 10 to 20 % less than the course budget."""
    assert reference.cost is not None
    headroom = 1 - reference.cost.monthly_usd / reference.cost.budget_usd
    assert 0.10 <= headroom <= 0.20, reference.cost.by_component


def test_reference_json_equals_the_golden_file(reference):
    """The whole result, byte for byte; regenerate with the command in the module docstring."""
    assert to_json(reference) == GOLDEN.read_text(encoding="utf-8"), (
        "the reference's grade changed; if that is intended, regenerate "
        "tests/grading/golden/reference.json (tests/grading/golden/README.md) and review the diff"
    )


def test_another_process_grades_to_the_same_bytes(reference, tmp_path):
    """A second process, with another hash seed, writes the same JSON as this one."""
    out = tmp_path / "reference.json"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    command = [
        str(Path(sys.executable).parent / "designlab"),
        "grade",
        str(STEPS / "designs" / "reference.yaml"),
        "--format",
        "json",
        "--out",
        str(out),
        "--steps-dir",
        str(STEPS),
    ]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr + done.stdout
    assert out.read_text(encoding="utf-8") == to_json(reference)


def test_a_check_judged_on_another_scenario_than_its_steps_names_it(reference):
    """Step 9 runs instance-loss; two of its checks judge replay and rolling-deploy, and say so
    (the page heads them with their scenario); a check on the step's own scenario names none."""
    step = next(s for s in reference.steps if s.id == "worker-crash")
    assert step.scenario == "instance-loss"
    named = {c.id: c.scenario for c in step.checks}
    assert named == {
        "lost-worker-noticed": None,
        "pause-not-evicted": None,
        "no-rebalance-storm": "replay",
        "deploy-moves-few-partitions": "rolling-deploy",
    }
