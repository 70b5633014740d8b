"""Issue 16, case 9: ``designlab lint`` refuses a fault timed after its scenario's end (a crash at
5,000 s of a 1,000 s scenario) and a check its scenario cannot exercise, naming file and line;
before, both passed lint and the check then passed vacuously."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli import main

REPO_STEPS = Path(__file__).resolve().parents[3] / "steps"


@pytest.fixture
def course(tmp_path: Path) -> Path:
    root = tmp_path / "steps"
    shutil.copytree(REPO_STEPS, root)
    return root


def lint(root: Path) -> tuple[int, list[str]]:
    outcome = CliRunner().invoke(main, ["lint", str(root)])
    return outcome.exit_code, outcome.stdout.splitlines()


def replace(path: Path, old: str, new: str) -> int:
    """Replace ``old`` (once, exactly) and return its 1-based line."""
    text = path.read_text()
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new))
    return text[: text.index(old)].count("\n") + 1


def test_the_shipped_course_lints_clean(course):
    assert lint(course) == (0, ["13 steps: 0 errors, 0 warnings"])


def test_case9_a_crash_at_5000_s_of_a_1000_s_scenario_fails_lint_naming_file_and_line(course):
    scenario = course / "scenarios" / "worker-crash.yaml"
    line = replace(scenario, "at_seconds: 240", "at_seconds: 5000")
    code, lines = lint(course)
    assert code == 1
    assert (
        f"{scenario}:{line}: error: faults.0.at_seconds: the worker_crash fault starts at 5000 s, "
        "at or after the end of the scenario (duration_seconds: 1000 s)"
    ) in "\n".join(lines)


def test_case9_a_fault_starting_exactly_at_the_end_is_refused_too(course):
    scenario = course / "scenarios" / "worker-crash.yaml"
    replace(scenario, "at_seconds: 240", "at_seconds: 1000")
    code, lines = lint(course)
    assert code == 1 and any("faults.0.at_seconds" in line for line in lines)


def test_case9_a_check_on_a_failover_metric_in_a_scenario_without_failover_fails_lint(course):
    step = course / "11-state-failover" / "step.yaml"
    line = replace(step, "scenario: state-failover", "scenario: peak")
    expr_line = 1 + step.read_text().splitlines().index("    expr: metrics.state_writes_lost == 0")
    code, lines = lint(course)
    assert code == 1 and line == 6
    assert any(
        f"{step}:{expr_line}: error:" in text
        and "reads metrics.state_writes_lost, which only a state_failover fault produces, but "
        "scenario 'peak' has no state_failover fault"
        in text
        for text in lines
    ), lines


def test_case9_a_check_reading_a_fault_the_scenario_does_not_have_fails_lint(course):
    step = course / "09-worker-crash" / "step.yaml"
    text = step.read_text()
    first_expr = next(line for line in text.splitlines() if line.startswith("    expr: "))
    replace(step, first_expr, "    expr: scenario.faults[2].duration_seconds > 0")
    code, lines = lint(course)
    assert code == 1
    assert any("reads scenario.faults[2], but scenario 'instance-loss' has 2 fault(s)" in t
               for t in lines), lines  # fmt: skip


def test_case9_the_authoring_guide_lists_every_fault_specific_metric():
    from app.course.lint_grading import FAULT_METRICS

    guide = " ".join((REPO_STEPS / "README.md").read_text().split())
    for metric, kind in FAULT_METRICS.items():
        assert f"`{metric}`" in guide and f"`{kind}`" in guide, metric


def test_case8_a_decision_range_wider_than_the_design_allows_fails_lint(course):
    """The form shows the decision's range and the server enforces it; a range the design
    model refuses (partitions from 0) would offer values no save can keep."""
    step = course / "07-evening-peak" / "step.yaml"
    text = step.read_text()
    start = text.index("  - field: event_log.partitions")
    line = text[:start].count("\n") + 1 + text[start:].splitlines().index("    min: 1")
    step.write_text(text[:start] + text[start:].replace("    min: 1", "    min: 0", 1))
    code, lines = lint(course)
    assert code == 1
    assert (
        f"{step}:{line}: error: decisions.0.min: min 0 is below the design's own minimum 1 for "
        "event_log.partitions: the form would offer values the design refuses"
    ) in lines


TIMED = Path(__file__).resolve().parents[2] / "grading" / "fixtures" / "timed"


def test_stats_prints_each_step_and_the_total_in_minutes():
    outcome = CliRunner().invoke(main, ["lint", str(TIMED), "--stats", "--run-seconds", "12"])
    assert outcome.exit_code == 0
    lines = outcome.stdout.splitlines()
    # the fixture's design-review checks draw the check-kind warnings; the stats follow them
    assert next(line for line in lines if line.startswith("2 steps: ")).startswith(
        "2 steps: 0 errors, "
    )
    assert any(
        line.startswith(" 2 Run it ") and line.split()[-5:] == ["1", "0.0", "0.0", "0.2", "0.2"]
        for line in lines
    )
    assert "plus the runs: 1.2 minutes, within the aim of 55 minutes" in lines[-1]


def test_seeds_reports_each_shared_run_with_file_and_line_and_counts_them(course, tmp_path):
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    copied = "the smallest unit of work whose events must stay in one order"
    (seeds / "source.txt").write_text(f"Pick {copied}, and no larger.")
    narrative = course / "01-run-api" / "narrative.md"
    narrative.write_text(narrative.read_text() + f"\nPick {copied}.\n")
    line = narrative.read_text().count("\n")
    code, lines = lint_with(course, "--seeds", str(seeds))
    assert code == 0
    shared = [entry for entry in lines if ": warning: " in entry and "shared with" in entry]
    assert shared[0].startswith(f"{narrative}:{line}: warning: 13 words shared with the source")
    assert len(shared) == 1
    assert lines[-1] == "1 run of 8 or more words shared with the sources, in 1 file"


def test_seeds_that_is_not_a_folder_is_bad_input(course, tmp_path):
    outcome = CliRunner().invoke(main, ["lint", str(course), "--seeds", str(tmp_path / "none")])
    assert outcome.exit_code == 2 and "--seeds" in outcome.stderr


def lint_with(root: Path, *options: str) -> tuple[int, list[str]]:
    outcome = CliRunner().invoke(main, ["lint", str(root), *options])
    return outcome.exit_code, outcome.stdout.splitlines()


def test_a_decision_min_at_an_exclusive_design_bound_fails_lint(course):
    """The cache TTL must be greater than 0 (gt=0): a widget from 0 offers a value every save
    refuses, with pydantic's text instead of the form's."""
    step = course / "05-agents-tools-model" / "step.yaml"
    text = step.read_text()
    start = text.index("  - field: model.cache.ttl_hours")
    step.write_text(text[:start] + text[start:].replace("    min: 1", "    min: 0", 1))
    code, lines = lint(course)
    assert code == 1
    assert any(
        "min 0 is not above the design's own exclusive minimum 0 for model.cache.ttl_hours" in t
        for t in lines
    ), lines
