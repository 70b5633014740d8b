"""The grade result as JUnit XML, so CI dashboards show it: a testsuite per step, a testcase per
check, failure and error elements with the message and the explanation, a step's points as its
suite's properties and a check's as the first line of its ``system-out`` (``points: 0/4``).

Follows the schema most CI tools read (the Ant/Jenkins JUnit format): ``testsuites`` >
``testsuite`` (name, tests, failures, errors, skipped) > ``properties`` and ``testcase``
(name, classname) with an optional ``failure`` or ``error`` (message attribute, text body) and a
``system-out`` (a testcase may not hold ``properties`` in that schema).
No timestamps or times, so the same grade gives the same bytes. Every attribute and text is
passed through ``printable`` (app/control_characters.py): a control character from a design (its
name holding byte 0x01) is written as ``\\x01``, since XML 1.0 cannot hold it at all. The
document validates against the Jenkins xUnit plugin's junit-10.xsd (tested with a copy of it), so
the root ``testsuites`` carries no ``skipped`` count (that schema allows it on a testsuite only).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from app.control_characters import printable
from app.grading.result import CheckResult, GradeResult, StepResult


def _properties(parent: ET.Element, values: dict[str, object]) -> None:
    props = ET.SubElement(parent, "properties")
    for name, value in values.items():
        if value is not None:
            ET.SubElement(props, "property", name=name, value=str(value))


def _counts(element: ET.Element, checks: list[CheckResult], *, skipped: bool = True) -> None:
    element.set("tests", str(len(checks)))
    element.set("failures", str(sum(c.status in ("fail", "not_exercised") for c in checks)))
    element.set("errors", str(sum(c.status == "error" for c in checks)))
    if skipped:
        element.set("skipped", "0")


def _testcase(suite: ET.Element, step: StepResult, check: CheckResult) -> None:
    case = ET.SubElement(suite, "testcase", name=f"{check.id}: {check.title}")
    case.set("classname", f"designlab.{step.id}")
    points = f"points: {check.points}/{check.max_points}"
    body = "\n".join(
        part
        for part in (
            check.explanation,
            f"hint: {check.hint}" if check.hint else "",
            f"read: {step.id}#{check.concept}" if check.concept else "",
        )
        if part
    )
    if check.status == "pass":
        out = ET.SubElement(case, "system-out")
        out.text = f"{points}\n{check.message}\n{check.explanation}".strip()
        return
    # Not exercised is a failure, not a skip: the design scored 0 points for it.
    kind = "error" if check.status == "error" else "failure"
    outcome = ET.SubElement(case, kind, message=check.message, type=check.status)
    outcome.text = body
    ET.SubElement(case, "system-out").text = points


def _error_suite(root: ET.Element, result: GradeResult) -> None:
    """A bad input or internal error: one suite with one errored testcase naming every problem."""
    suite = ET.SubElement(root, "testsuite", name="designlab grade")
    suite.set("tests", "1")
    suite.set("failures", "0")
    suite.set("errors", "1")
    suite.set("skipped", "0")
    case = ET.SubElement(suite, "testcase", name="grade the design", classname="designlab")
    error = ET.SubElement(case, "error", message=result.message, type="error")
    error.text = "\n".join(str(p) for p in result.errors) or result.message


def _printable(root: ET.Element) -> None:
    """Escape the control characters of every attribute and text under ``root``, in place."""
    for element in root.iter():
        for name, value in element.attrib.items():
            element.set(name, printable(value))
        if element.text:
            element.text = printable(element.text)


def to_junit(result: GradeResult) -> str:
    """The result as a JUnit XML document (UTF-8 text with an XML declaration)."""
    root = ET.Element("testsuites", name=f"designlab grade: {result.design_name or 'design'}")
    checks = [c for s in result.steps for c in s.checks]
    _counts(root, checks, skipped=False)
    if not result.steps:
        _error_suite(root, result)
        root.set("tests", "1")
        root.set("errors", "1")
    for number, step in enumerate(result.steps, start=1):
        suite = ET.SubElement(root, "testsuite", name=f"{number:02d} {step.id}: {step.title}")
        _counts(suite, step.checks)
        _properties(
            suite,
            {
                "points": step.points,
                "max_points": step.max_points,
                "status": step.status,
                "scenario": step.scenario,
                "seed": step.seed,
                "message": step.message or None,
            },
        )
        for check in step.checks:
            _testcase(suite, step, check)
    _printable(root)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
