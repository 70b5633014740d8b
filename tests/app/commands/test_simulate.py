"""``designlab simulate DESIGN --scenario NAME|FILE [--seed N] [--json]``: exit codes and output."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from app.cli import main
from tests.factories import write

runner = CliRunner()

DESIGN = """\
version: 1
event_log: {partitions: 12, partition_key: event_id}
delivery: {commit: after_processing, dedupe: durable_same_transaction}
orchestration: {pattern: orchestrator_worker}
"""
CRASH = """\
version: 1
name: small-crash
duration_seconds: 120
seed: 3
load: {runs_per_second: 0.2}
faults:
  - {kind: worker_crash, at_seconds: 30, duration_seconds: 20}
"""


def test_a_named_course_scenario_is_priced_against_the_budget(course_dir: Path, tmp_path: Path):
    design = write(tmp_path / "design.yaml", DESIGN)
    args = ["simulate", str(design), "--scenario", "peak", "--steps-dir", str(course_dir)]
    outcome = runner.invoke(main, [*args, "--json"])
    assert outcome.exit_code == 0, outcome.output
    data = json.loads(outcome.stdout)
    assert data["scenario"] == "peak"
    assert data["seed"] == 7
    assert data["metrics"]["arrivals"] > 0
    assert data["cost"]["budget_usd"] > 0
    again = runner.invoke(main, [*args, "--json"])
    assert again.stdout == outcome.stdout


def test_a_scenario_file_and_the_text_summary(tmp_path: Path):
    design = write(tmp_path / "design.yaml", DESIGN)
    scenario = write(tmp_path / "crash.yaml", CRASH)
    outcome = runner.invoke(
        main,
        [
            "simulate",
            str(design),
            "--scenario",
            str(scenario),
            "--seed",
            "5",
            "--steps-dir",
            str(tmp_path / "no-course"),
        ],
    )
    assert outcome.exit_code == 0, outcome.output
    lines = outcome.stdout.splitlines()
    assert lines[0].startswith("small-crash (seed 5, 120 s simulated")
    assert any(line.startswith("redelivered ") and "lost 0" in line for line in lines)
    assert not any(line.startswith("monthly cost") for line in lines)


def test_an_unknown_scenario_name_is_bad_input(course_dir: Path, tmp_path: Path):
    design = write(tmp_path / "design.yaml", DESIGN)
    outcome = runner.invoke(
        main, ["simulate", str(design), "--scenario", "peek", "--steps-dir", str(course_dir)]
    )
    assert outcome.exit_code == 2
    assert "no scenario 'peek'; choose a file or one of: peak" in outcome.output


def test_a_bad_design_names_file_line_and_field(course_dir: Path, tmp_path: Path):
    design = write(tmp_path / "design.yaml", DESIGN.replace("partitions: 12", "partitions: 0"))
    outcome = runner.invoke(
        main, ["simulate", str(design), "--scenario", "peak", "--steps-dir", str(course_dir)]
    )
    assert outcome.exit_code == 2
    assert f"{design}:2: event_log.partitions: Input should be greater than" in outcome.output
