"""The example CI workflow (docs/ci/github-actions-grade.yml): its grading command, run as
written, grades a design and leaves the JUnit report its publishing steps read."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = REPO / "docs" / "ci" / "github-actions-grade.yml"
FIXTURE = REPO / "tests" / "grading" / "fixtures" / "course"


@pytest.fixture(scope="module")
def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text())


def _steps(workflow: dict) -> list[dict]:
    return workflow["jobs"]["grade"]["steps"]


def _grade_step(workflow: dict) -> dict:
    [step] = [s for s in _steps(workflow) if "designlab grade" in s.get("run", "")]
    return step


def _run_grade_step(workflow: dict, workspace: Path, design: Path) -> subprocess.CompletedProcess:
    """Lay out the workspace as the workflow does (design.yaml, designlab/ checkout) and run the
    grading step's shell command there with the workflow's environment."""
    shutil.copy(design, workspace / "design.yaml")
    (workspace / "designlab").mkdir()
    (workspace / "designlab" / "steps").symlink_to(FIXTURE, target_is_directory=True)
    env = {**os.environ, **{k: str(v) for k, v in workflow["env"].items()}}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(
        ["bash", "-e", "-c", _grade_step(workflow)["run"]],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_grading_command_passes_a_good_design(workflow, tmp_path):
    """Exit 0 and a JUnit report with every check as a passed testcase."""
    done = _run_grade_step(workflow, tmp_path, FIXTURE / "designs" / "reference.yaml")
    assert done.returncode == 0, done.stderr
    root = ET.parse(tmp_path / "grade.xml").getroot()
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("4", "0", "0")
    assert done.stdout.startswith("PASS 10/10")


def test_the_grading_command_fails_a_bad_design_and_still_writes_the_report(workflow, tmp_path):
    """Exit 1 fails the job; the report is there for the steps that run after a failure."""
    done = _run_grade_step(workflow, tmp_path, FIXTURE / "designs" / "bad" / "thin-log.yaml")
    assert done.returncode == 1
    root = ET.parse(tmp_path / "grade.xml").getroot()
    assert root.get("failures") == "2"


def test_the_report_is_published_even_when_the_grade_fails(workflow):
    """The steps after grading read the file the command writes and run after a failure."""
    command = _grade_step(workflow)["run"]
    out = command.split("--out", 1)[1].split()[0]
    later = _steps(workflow)[_steps(workflow).index(_grade_step(workflow)) + 1 :]
    assert [s["with"].get("report_paths") or s["with"].get("path") for s in later] == [out, out]
    assert all("!cancelled()" in s["if"] for s in later)


def test_designlab_is_installed_from_the_checkout_the_command_reads(workflow):
    """pip installs ./designlab and the grade reads designlab/steps from the same checkout."""
    runs = [s.get("run", "") for s in _steps(workflow)]
    assert "python -m pip install ./designlab" in runs
    assert "--steps-dir designlab/steps" in _grade_step(workflow)["run"]
