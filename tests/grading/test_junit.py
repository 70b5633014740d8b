"""Issue 16, case 7: the JUnit report validates against the schema Jenkins checks reports with
(its xUnit plugin's junit-10.xsd, vendored under fixtures/), and a control character anywhere in
the result (a design named with byte 0x01) is written as an escape, not as XML no parser reads.
The text and JSON reports escape it too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lxml import etree

from app.grading.grader import error_result, grade, load_material, problem
from app.grading.reports import ReportFormat, render
from simulator.design import Design
from simulator.files import load_design, load_model

FIXTURES = Path(__file__).parent / "fixtures"
COURSE = FIXTURES / "course"
SCHEMA = etree.XMLSchema(etree.parse(str(FIXTURES / "junit-10.xsd")))
HOSTILE = "\x01\x00\x1b[31m\x7f\x85\ufffe"


@pytest.fixture(scope="module")
def material():
    return load_material(COURSE)


def validated(xml: str) -> etree._Element:
    """The parsed report; fails the test unless it is well-formed and valid by junit-10.xsd."""
    document = etree.fromstring(xml.encode("utf-8"))
    SCHEMA.assertValid(document)
    return document


@pytest.mark.parametrize("design", ["reference.yaml", "bad/thin-log.yaml", "bad/sync-start.yaml"])
def test_case7_every_junit_report_validates_against_the_jenkins_junit_schema(material, design):
    result = grade(load_design(COURSE / "designs" / design), material)
    root = validated(render(result, ReportFormat.junit))
    assert root.tag == "testsuites" and len(root.findall("testsuite")) == len(result.steps)


def test_case7_the_junit_error_report_validates_too():
    result = error_result([problem("design.yaml", "bad\x01 value", 3, "name")], "Bad \x00input")
    root = validated(render(result, ReportFormat.junit))
    error = root.find("testsuite/testcase/error")
    assert error is not None and error.get("message") == "Bad \\x00input"


def test_case7_a_control_character_in_the_design_name_gives_valid_escaped_junit(material):
    design = load_model(Design, f'version: 1\nname: "{json.dumps(HOSTILE)[1:-1]}"\n', "d.yaml")
    assert design.name == HOSTILE
    root = validated(render(grade(design, material), ReportFormat.junit))
    assert root.get("name") == "designlab grade: \\x01\\x00\\x1b[31m\\x7f\\x85\\ufffe"


def test_case7_the_text_report_shows_control_characters_as_escapes(material):
    design = Design(name=HOSTILE)
    text = render(grade(design, material), ReportFormat.text)
    assert text.splitlines()[0].startswith("designlab grade: \\x01\\x00\\x1b[31m\\x7f\\x85\\ufffe ")
    assert not any(c in text for c in "\x00\x01\x1b\x7f\x85\ufffe")


def test_case7_the_json_report_escapes_every_control_character_and_reads_back(material):
    design = Design(name=HOSTILE)
    text = render(grade(design, material), ReportFormat.json)
    assert not any(c in text for c in "\x00\x01\x1b\x7f\x85")
    assert json.loads(text)["design_name"] == HOSTILE


def test_case7_designlab_grade_junit_of_a_design_named_with_byte_1_is_valid_xml(tmp_path):
    from typer.testing import CliRunner

    from app.cli import main

    design = tmp_path / "design.yaml"
    design.write_text('version: 1\nname: "ctl\\x01name"\n')
    out = tmp_path / "grade.xml"
    outcome = CliRunner().invoke(
        main,
        ["grade", str(design), "--format", "junit", "--out", str(out), "--steps-dir", str(COURSE)],
    )
    assert outcome.exit_code in (0, 1), outcome.output
    root = validated(out.read_text(encoding="utf-8"))
    assert root.get("name") == "designlab grade: ctl\\x01name"
