"""The three report formats and the all-or-nothing write."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from app.grading.grader import error_result, grade, load_material, problem
from app.grading.reports import ReportFormat, render, write_atomically
from simulator.files import load_design

FIXTURE = Path(__file__).parent / "fixtures" / "course"


@pytest.fixture(scope="module")
def thin_log():
    material = load_material(FIXTURE)
    return grade(load_design(FIXTURE / "designs" / "bad" / "thin-log.yaml"), material)


def test_junit_has_a_suite_per_step_and_a_case_per_check(thin_log):
    """Counts, failure messages with the explanation, a step's points as properties and a
    check's in its system-out."""
    root = ET.fromstring(render(thin_log, ReportFormat.junit))
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("4", "2", "0")
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["01 api: The run API", "02 log: The event log"]
    log = suites[1]
    props = {p.get("name"): p.get("value") for p in log.find("properties") or []}
    assert (props["points"], props["max_points"], props["status"]) == ("0", "5", "fail")
    case = log.findall("testcase")[0]
    assert case.get("name") == "replicated-log: Three replicas, two in sync"
    assert case.get("classname") == "designlab.log"
    failure = case.find("failure")
    assert failure is not None
    assert failure.get("message") == "A broker loss can lose acknowledged writes."
    assert "replication factor 1, min.insync.replicas 1." in (failure.text or "")
    assert case.find("properties") is None
    assert case.findtext("system-out") == "points: 0/4"


def test_junit_for_an_error_result_has_one_errored_case():
    """Bad input still gives a valid report that CI shows as an error, naming file and line."""
    result = error_result(
        [
            problem(
                "design.yaml",
                "Input should be greater than or equal to 1",
                14,
                "event_log.partitions",
            )
        ],
        "design.yaml is not a valid design: 1 problem(s)",
    )
    root = ET.fromstring(render(result, ReportFormat.junit))
    error = root.find("testsuite/testcase/error")
    assert error is not None
    assert error.text == (
        "design.yaml:14: event_log.partitions: Input should be greater than or equal to 1"
    )
    assert (root.get("tests"), root.get("errors")) == ("1", "1")


def test_json_is_contract_3(thin_log):
    """Top-level keys of contract 3, and a check's keys, in this order."""
    data = json.loads(render(thin_log, ReportFormat.json))
    assert list(data)[:8] == [
        "schema_version",
        "status",
        "score",
        "points",
        "max_points",
        "seed",
        "simulator_version",
        "message",
    ]
    assert data["steps"][1]["checks"][0] == {
        "id": "replicated-log",
        "title": "Three replicas, two in sync",
        "kind": "design_review",
        "status": "fail",
        "points": 0,
        "max_points": 4,
        "message": "A broker loss can lose acknowledged writes.",
        "explanation": "replication factor 1, min.insync.replicas 1.",
        "hint": "Use replication factor 3 and min.insync.replicas 2.",
        "concept": "replicas",
        "scenario": None,
    }


def test_text_shows_why_for_failed_checks_only(thin_log):
    """A failed check has its why, hint and where to read; a passed check is one line."""
    text = render(thin_log, ReportFormat.text)
    assert "why: replication factor 1, min.insync.replicas 1." in text
    assert "read: log#replicas" in text
    assert "why: keys kept" not in text
    assert text.rstrip().endswith(
        "2 of 4 checks failed: log/replicated-log, log/enough-partitions. 5/10 points."
    )
    assert "Result: FAIL  5/10 points (score 0.50)" in text


def test_atomic_write_keeps_the_old_file_when_writing_fails(tmp_path, monkeypatch):
    """A failure before the rename leaves the previous report whole and no temporary file."""
    report = tmp_path / "grade.json"
    report.write_text("previous")

    def broken_fsync(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError):
        write_atomically(report, "new report")
    assert report.read_text() == "previous"
    assert [p.name for p in tmp_path.iterdir()] == ["grade.json"]


def test_atomic_write_replaces_the_file(tmp_path):
    """The new report replaces the old one in full."""
    report = tmp_path / "grade.xml"
    report.write_text("old")
    write_atomically(report, "<testsuites/>\n")
    assert report.read_text() == "<testsuites/>\n"


def test_a_report_is_readable_as_a_plainly_written_file_is(tmp_path):
    """Not mkstemp's private 0600: a CI step running as another user publishes the report."""
    previous = os.umask(0o022)
    try:
        write_atomically(tmp_path / "grade.xml", "<testsuites/>\n")
    finally:
        os.umask(previous)
    assert (tmp_path / "grade.xml").stat().st_mode & 0o777 == 0o644


def test_junit_marks_a_check_that_could_not_run_as_an_error(tmp_path):
    """A check whose expression raised is an <error> with the reason, counted in errors."""
    import shutil

    course = tmp_path / "course"
    shutil.copytree(FIXTURE, course)
    step = course / "02-log" / "step.yaml"
    step.write_text(
        step.read_text().replace("design.event_log.partitions >= 40", "metrics.rebalances == 0")
    )
    result = grade(load_design(FIXTURE / "designs" / "reference.yaml"), load_material(course))
    root = ET.fromstring(render(result, ReportFormat.junit))
    assert (root.get("failures"), root.get("errors")) == ("0", "1")
    error = root.find("testsuite/testcase/error")
    assert error is not None
    assert "metrics is not available here" in (error.get("message") or "")
    assert "Result: ERROR" in render(result, ReportFormat.text)


def test_text_reports_keep_long_check_and_step_titles_whole(thin_log):
    """Titles used to be cut at 70-72 characters without a mark; now a long one wraps under
    itself, every word kept, and the points stay in their column."""
    step_title = "Size the event log for the evening peak " + "and the replay after an outage " * 3
    check_title = "The log keeps every acknowledged event " + "through a crash and a failover " * 3
    step = thin_log.steps[0]
    checks = [step.checks[0].model_copy(update={"title": check_title}), *step.checks[1:]]
    long = thin_log.model_copy(
        update={"steps": [step.model_copy(update={"title": step_title, "checks": checks})]}
    )
    text = render(long, ReportFormat.text)
    check = checks[0]
    without_points = text.replace(f" {step.points}/{step.max_points}\n", "\n").replace(
        f" {check.points}/{check.max_points}\n", "\n"
    )
    words = " ".join(without_points.split())
    assert " ".join(step_title.split()) in words
    assert " ".join(check_title.split()) in words
    first = next(line for line in text.splitlines() if "Size the event log" in line)
    assert first.endswith(f"{step.points:>3}/{step.max_points}")
    assert max(len(line) for line in text.splitlines()) <= 100
