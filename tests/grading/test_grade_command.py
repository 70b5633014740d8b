"""``designlab grade``: exit codes 0-3, the report always written, errors naming file and line."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

from typer.testing import CliRunner

from app.cli import main

FIXTURE = Path(__file__).parent / "fixtures" / "course"
REFERENCE = FIXTURE / "designs" / "reference.yaml"
runner = CliRunner()


def run(*args: str):
    return runner.invoke(main, ["grade", *args, "--steps-dir", str(FIXTURE)])


def test_a_passing_design_exits_0():
    """The fixture's reference passes: exit 0 and the text report on standard output."""
    outcome = run(str(REFERENCE))
    assert outcome.exit_code == 0, outcome.output
    assert "Result: PASS  10/10 points (score 1.00)" in outcome.stdout


def test_a_failing_design_exits_1():
    """A known-bad design exits 1 and names the failed check."""
    outcome = run(str(FIXTURE / "designs" / "bad" / "sync-start.yaml"), "--format", "json")
    assert outcome.exit_code == 1, outcome.output
    data = json.loads(outcome.stdout)
    assert (data["status"], data["points"], data["max_points"]) == ("fail", 8, 10)


def test_a_bad_design_exits_2_naming_file_line_and_field(tmp_path):
    """partitions: 0 is reported at its line; the error result is written to --out."""
    design = tmp_path / "design.yaml"
    design.write_text("version: 1\nname: broken\nevent_log:\n  partitions: 0\n")
    out = tmp_path / "grade.json"
    outcome = run(str(design), "--format", "json", "--out", str(out))
    assert outcome.exit_code == 2, outcome.output
    assert (
        f"error: {design}:4: event_log.partitions: Input should be greater than or equal to 1"
        in (outcome.stderr)
    )
    data = json.loads(out.read_text())
    assert data["status"] == "error"
    assert data["errors"] == [
        {
            "file": str(design),
            "line": 4,
            "field": "event_log.partitions",
            "message": "Input should be greater than or equal to 1",
        }
    ]


def test_a_missing_design_exits_2_with_an_error_report(tmp_path):
    """A file that does not exist is bad input, and the JUnit report says so."""
    out = tmp_path / "grade.xml"
    outcome = run(str(tmp_path / "nope.yaml"), "--format", "junit", "--out", str(out))
    assert outcome.exit_code == 2
    error = ET.parse(out).getroot().find("testsuite/testcase/error")
    assert error is not None and "nope.yaml" in (error.text or "")


def test_a_bad_option_is_a_usage_error():
    """A negative seed or an unknown format exits 2."""
    assert run(str(REFERENCE), "--seed", "-1").exit_code == 2
    assert run(str(REFERENCE), "--format", "html").exit_code == 2


def test_an_unwritable_out_exits_2(tmp_path):
    """--out into a folder that does not exist exits 2 and says why."""
    outcome = run(str(REFERENCE), "--out", str(tmp_path / "missing" / "grade.txt"))
    assert outcome.exit_code == 2
    assert "cannot write" in outcome.stderr


def test_a_course_that_cannot_grade_exits_3(tmp_path):
    """A broken course.yaml is not the learner's fault: exit 3 with an error result."""
    course = tmp_path / "course"
    shutil.copytree(FIXTURE, course)
    (course / "course.yaml").write_text("version: 1\nid: x\n")
    outcome = runner.invoke(
        main, ["grade", str(REFERENCE), "--steps-dir", str(course), "--format", "json"]
    )
    assert outcome.exit_code == 3
    data = json.loads(outcome.stdout)
    assert data["status"] == "error"
    assert any(e["file"].endswith("course.yaml") for e in data["errors"])


def test_out_writes_the_report_and_prints_a_summary(tmp_path):
    """With --out the report goes to the file; standard output gets one summary line."""
    out = tmp_path / "grade.xml"
    outcome = run(str(REFERENCE), "--format", "junit", "--out", str(out))
    assert outcome.exit_code == 0
    assert ET.parse(out).getroot().get("tests") == "4"
    assert outcome.stdout.splitlines()[0] == "PASS 10/10: Passed all 4 checks: 10/10 points."


def test_an_unexpected_exception_exits_3_with_an_error_report(tmp_path, monkeypatch):
    """A bug inside grading still leaves a complete error result and exit code 3."""
    import app.commands.grade as command

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(command, "grade", broken)
    out = tmp_path / "grade.json"
    outcome = run(str(REFERENCE), "--format", "json", "--out", str(out))
    assert outcome.exit_code == 3
    data = json.loads(out.read_text())
    assert (data["status"], data["message"]) == ("error", "internal error: RuntimeError: boom")


def test_case6_a_design_with_a_key_given_twice_exits_2_naming_file_line_and_key(tmp_path):
    """A second `partitions: 24` under `partitions: 96` used to grade as 24."""
    design = tmp_path / "design.yaml"
    design.write_text("version: 1\nevent_log:\n  partitions: 96\n  partitions: 24\n")
    outcome = run(str(design), "--format", "json")
    assert outcome.exit_code == 2, outcome.output
    assert f"error: {design}:4: event_log.partitions: duplicate key 'partitions'" in outcome.stderr
    assert json.loads(outcome.stdout)["status"] == "error"


SIMULATED = Path(__file__).parent / "fixtures" / "simulated"


def test_case_15_grade_has_the_servers_size_budget_and_exits_2_naming_the_fields():
    """A simulation over --max-step-events is refused up front: exit 2 (bad input, as the server's
    422), every error step says why, and ``errors`` names the fields."""
    design = SIMULATED / "designs" / "reference.yaml"
    args = ["grade", str(design), "--format", "json", "--steps-dir", str(SIMULATED)]
    assert runner.invoke(main, args).exit_code == 0
    outcome = runner.invoke(main, [*args, "--max-step-events", "10"])
    assert outcome.exit_code == 2, outcome.output
    data = json.loads(outcome.stdout)
    assert data["status"] == "error"
    assert {e["field"] for e in data["errors"]} >= {"duration_seconds"}
    errored = [s for s in data["steps"] if s["status"] == "error"]
    assert errored and all("too large to simulate" in s["message"] for s in errored)


COURSE = Path(__file__).resolve().parents[2] / "steps"


def test_a_course_scenario_stopped_on_a_busy_machine_exits_3_and_blames_no_field():
    """A wall-time limit no simulation can meet, with nothing in the design that makes a run
    slow: the machine's matter, not bad input (exit 3), said to be no fault of the design, and
    no field of the design or the course's scenario named as one to change."""
    design = COURSE / "designs" / "reference.yaml"
    args = ["grade", str(design), "--format", "json", "--steps-dir", str(COURSE)]
    outcome = runner.invoke(main, [*args, "--timeout-seconds", "0.001"])
    assert outcome.exit_code == 3, outcome.output
    data = json.loads(outcome.stdout)
    assert data["status"] == "error"
    assert "not the design's fault" in data["message"]
    assert "--timeout-seconds" in data["message"]
    assert [e["field"] for e in data["errors"]] == [""]


def test_a_field_refused_in_every_scenario_is_one_error_at_its_file_and_line(tmp_path):
    """max.poll.interval.ms 1 ms makes eight of the course's scenarios too large: one error, at
    the design file's line of that field, naming the first scenario's figure and the others."""
    text = (COURSE / "designs" / "reference.yaml").read_text()
    marker = (
        "  agent:\n    instances: 8\n    concurrency_per_instance: 12\n"
        "    max_poll_records: 50\n    max_poll_interval_ms: 300000\n"
    )
    assert marker in text
    design = tmp_path / "tiny-poll.yaml"
    design.write_text(text.replace(marker, marker.replace("300000", "1"), 1))
    line = text[: text.index(marker)].count("\n") + 5
    args = ["grade", str(design), "--format", "json", "--steps-dir", str(COURSE)]
    outcome = runner.invoke(main, args)
    assert outcome.exit_code == 2, outcome.output
    errors = json.loads(outcome.stdout)["errors"]
    assert len(errors) == 1, errors
    (error,) = errors
    assert (error["file"], error["line"], error["field"]) == (
        str(design),
        line,
        "consumers.agent.max_poll_interval_ms",
    )
    assert "also refused in 7 more scenarios" in error["message"]


def test_a_value_that_is_not_a_number_is_named_as_such(tmp_path):
    """.nan is not "above the maximum": the message says what it is."""
    text = (COURSE / "designs" / "reference.yaml").read_text()
    design = tmp_path / "nan.yaml"
    design.write_text(text.replace("base_backoff_seconds: 1.0", "base_backoff_seconds: .nan", 1))
    outcome = runner.invoke(main, ["grade", str(design), "--steps-dir", str(COURSE)])
    assert outcome.exit_code == 2, outcome.output
    assert "model.retry.base_backoff_seconds: nan is not a finite number" in outcome.stdout


def test_a_seed_the_api_refuses_is_refused_here_too():
    """The API takes seeds up to 2^63 - 1; so does the CLI, so a CI grade can be replayed."""
    design = COURSE / "designs" / "reference.yaml"
    outcome = runner.invoke(main, ["grade", str(design), "--seed", str(2**63)])
    assert outcome.exit_code == 2
    assert "--seed" in outcome.output


def test_step_grades_only_the_steps_named_by_number_or_id_with_their_course_numbers():
    """CI grading one assignment: --step 4 --step evening-peak grades steps 4 and 7 alone, each
    as in the whole course, numbered as in the course; an unknown step is bad input (exit 2)
    naming the choices."""
    design = COURSE / "designs" / "reference.yaml"
    args = ["grade", str(design), "--steps-dir", str(COURSE)]
    outcome = runner.invoke(
        main, [*args, "--format", "json", "--step", "4", "--step", "evening-peak"]
    )
    assert outcome.exit_code == 0, outcome.output
    data = json.loads(outcome.stdout)
    assert [(s["number"], s["id"]) for s in data["steps"]] == [
        (4, "exactly-once-effects"),
        (7, "evening-peak"),
    ]
    assert (data["points"], data["max_points"], data["cost"]) == (18, 18, None)
    text = runner.invoke(main, [*args, "--step", "7"]).stdout
    assert "PASS   7  Scale to the evening peak within budget" in text
    unknown = runner.invoke(main, [*args, "--step", "99"])
    assert unknown.exit_code == 2
    assert "no step '99'; choose from 1 (run-api)" in unknown.stdout
