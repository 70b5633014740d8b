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


BILLION = """\
version: 1
name: billion
duration_seconds: 500000
seed: 3
load: {runs_per_second: null, step_events_per_second: 2000}
"""
LONG = """\
version: 1
name: long
duration_seconds: 43200
seed: 3
load: {runs_per_second: 0.5}
"""


def test_case_15_a_billion_event_scenario_exits_2_up_front_naming_what_makes_it_big(
    tmp_path: Path,
):
    """10^9 step events: refused before any work (the server's SIM_MAX_STEP_EVENTS), exit 2 with
    the fields named, not exit 3 "internal error"."""
    design = write(tmp_path / "design.yaml", DESIGN)
    scenario = write(tmp_path / "billion.yaml", BILLION)
    outcome = runner.invoke(main, ["simulate", str(design), "--scenario", str(scenario)])
    assert outcome.exit_code == 2, outcome.output
    assert "too large to simulate" in outcome.stderr
    assert "1,000,000,000" in outcome.stderr
    assert "duration_seconds" in outcome.stderr
    assert "load.step_events_per_second" in outcome.stderr
    assert "internal error" not in outcome.output


def test_case_15_max_step_events_overrides_the_size_budget(tmp_path: Path):
    design = write(tmp_path / "design.yaml", DESIGN)
    scenario = write(tmp_path / "crash.yaml", CRASH)
    args = ["simulate", str(design), "--scenario", str(scenario)]
    assert runner.invoke(main, args).exit_code == 0
    refused = runner.invoke(main, [*args, "--max-step-events", "100"])
    assert refused.exit_code == 2
    assert "more than the 100 one simulation may take" in refused.stderr


def test_case_15_a_simulation_over_timeout_seconds_is_stopped_with_exit_2(tmp_path: Path):
    """Twelve simulated hours take far longer than 0.5 s: stopped, exit 2, the message says how
    to allow more time."""
    design = write(tmp_path / "design.yaml", DESIGN)
    scenario = write(tmp_path / "long.yaml", LONG)
    args = ["simulate", str(design), "--scenario", str(scenario), "--timeout-seconds", "0.5"]
    outcome = runner.invoke(main, args)
    assert outcome.exit_code == 2, outcome.output
    assert "took longer than the 0.5 s" in outcome.stderr
    assert "--timeout-seconds" in outcome.stderr


STILL_DOWN = """\
version: 1
name: still-down
duration_seconds: 120
seed: 3
load: {runs_per_second: 0.2}
faults:
  - {kind: worker_crash, at_seconds: 30, duration_seconds: 500}
"""


def test_the_summary_is_honest_at_the_edges(tmp_path: Path):
    """Zero agent instances: the agent group has no capacity and processed no event (not
    "100000.0%" and "p95 0.00 s"); workers down past the end read so; the latency percentiles
    say how many events still waited (lower bounds)."""
    design = write(
        tmp_path / "design.yaml",
        DESIGN + "consumers: {agent: {instances: 0}}\n",
    )
    scenario = write(tmp_path / "still-down.yaml", STILL_DOWN)
    args = ["simulate", str(design), "--scenario", str(scenario)]
    outcome = runner.invoke(main, [*args, "--steps-dir", str(tmp_path / "no-course")])
    assert outcome.exit_code == 0, outcome.output
    text = outcome.stdout
    assert "100000" not in text
    assert "capacity 0/s: no capacity" in text
    agent = next(line for line in text.splitlines() if line.startswith("  agent:"))
    assert agent.endswith("no event processed")
    assert "events still waiting at the end, counted with their wait so far: lower bounds" in text


def test_workers_still_down_at_the_end_read_so(tmp_path: Path):
    design = write(tmp_path / "design.yaml", DESIGN)
    scenario = write(tmp_path / "still-down.yaml", STILL_DOWN)
    args = ["simulate", str(design), "--scenario", str(scenario)]
    outcome = runner.invoke(main, [*args, "--steps-dir", str(tmp_path / "no-course")])
    assert outcome.exit_code == 0, outcome.output
    lag = next(line for line in outcome.stdout.splitlines() if line.startswith("lag peak"))
    assert "drain never (workers still down at the end of the window (until 530 s)" in lag
    assert "more" not in lag
    assert "backlog at restart" not in lag


def test_causal_runs_print_their_runs_latency_and_order(tmp_path: Path):
    design = write(tmp_path / "design.yaml", DESIGN)
    scenario = write(
        tmp_path / "causal.yaml",
        CRASH.replace(
            "load: {runs_per_second: 0.2}", "load: {runs_per_second: 0.2, run_model: causal}"
        ),
    )
    args = ["simulate", str(design), "--scenario", str(scenario), "--steps-dir", str(tmp_path)]
    outcome = runner.invoke(main, args)
    assert outcome.exit_code == 0, outcome.output
    lines = outcome.stdout.splitlines()
    runs = next(line for line in lines if line.startswith("runs: "))
    reported = int(runs.split()[1].replace(",", ""))
    assert reported > 0
    assert any(line.startswith("run latency p50 ") and "critical path" in line for line in lines)
    order = next(line for line in lines if line.startswith("applied out of order: "))
    assert order.startswith("applied out of order: ")
    plain = runner.invoke(
        main,
        [
            "simulate",
            str(design),
            "--scenario",
            str(write(tmp_path / "c.yaml", CRASH)),
            "--steps-dir",
            str(tmp_path),
        ],
    )
    assert not any(line.startswith("runs: ") for line in plain.stdout.splitlines())
