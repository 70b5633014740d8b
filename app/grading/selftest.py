"""The course self-test: the reference design passes every check with full marks, and each
known-bad design (course.yaml ``known_bad``) fails exactly the checks it was made to fail.

A known-bad entry names checks by id (``async-start``) or, when ids repeat across steps, by
``step-id/check-id``. A check that errors counts as not passing.
"""

from __future__ import annotations

from dataclasses import dataclass

import simulator
from app.grading.grader import CourseMaterial, Simulate, grade
from app.grading.result import GradeResult
from simulator.design import Design
from simulator.errors import InputFileError
from simulator.files import load_design
from simulator.result import SimulationResult
from simulator.scenario import Scenario


@dataclass(frozen=True)
class SelfTestOutcome:
    """One design's verdict: which checks it should fail, which it did, and whether that holds."""

    file: str
    expected: frozenset[str]
    failed: frozenset[str]
    result: GradeResult | None
    problem: str = ""
    not_exercised: frozenset[str] = frozenset()
    """Checks the runs left not exercised (nothing to judge: 0 points), named as in ``failed``;
    those the entry lists as ``unjudged`` are not in ``failed``, the others are."""

    @property
    def failed_only(self) -> frozenset[str]:
        """Checks that failed or could not run: ``failed`` without the not exercised ones."""
        return self.failed - self.not_exercised

    @property
    def ok(self) -> bool:
        """True when the design failed exactly the expected checks (none for the reference)."""
        return not self.problem and self.expected == self.failed

    @property
    def unexpected(self) -> frozenset[str]:
        """Checks it failed but was not meant to."""
        return self.failed - self.expected

    @property
    def missed(self) -> frozenset[str]:
        """Checks it was meant to fail but passed."""
        return self.expected - self.failed

    def __str__(self) -> str:
        if self.problem:
            return f"{self.file}: {self.problem}"
        if self.ok:
            return f"{self.file}: ok"
        parts = []
        if self.missed:
            parts.append(f"passed {', '.join(sorted(self.missed))} but should fail")
        if self.unexpected:
            parts.append(f"failed {', '.join(sorted(self.unexpected))} unexpectedly")
        return f"{self.file}: {'; '.join(parts)}"


def failed_checks(
    result: GradeResult, names: set[str], unjudged: frozenset[str] = frozenset()
) -> frozenset[str]:
    """The checks that did not pass, each named as in ``names`` (bare id or ``step/id``); a check
    of ``unjudged`` that was not exercised is left out (its runs had nothing for it to judge)."""
    failed = set()
    for step in result.steps:
        for check in step.checks:
            if check.status == "pass":
                continue
            qualified = f"{step.id}/{check.id}"
            name = qualified if qualified in names else check.id
            if check.status == "not_exercised" and (name in unjudged or qualified in unjudged):
                continue
            failed.add(name)
    return frozenset(failed)


def not_exercised_checks(result: GradeResult, names: set[str]) -> frozenset[str]:
    """The checks ``result`` left not exercised, each named as in ``names`` (bare id or
    ``step/id``)."""
    found = set()
    for step in result.steps:
        for check in step.checks:
            if check.status == "not_exercised":
                qualified = f"{step.id}/{check.id}"
                found.add(qualified if qualified in names else check.id)
    return frozenset(found)


def _outcome(
    material: CourseMaterial,
    file: str,
    expected: frozenset[str],
    simulate: Simulate | None,
    unjudged: frozenset[str] = frozenset(),
) -> SelfTestOutcome:
    try:
        design = load_design(material.loaded.root / file)
    except InputFileError as exc:
        return SelfTestOutcome(file, expected, frozenset(), None, f"not a valid design: {exc}")
    result = grade(design, material, simulate=simulate)
    names = set(expected) | set(unjudged)
    failed = failed_checks(result, set(expected), unjudged)
    idle = not_exercised_checks(result, names)
    problem = ""
    if file == material.course.reference_design and result.points != result.max_points:
        problem = f"scored {result.points}/{result.max_points}, not full marks"
    return SelfTestOutcome(file, expected, failed, result, problem, idle)


def shared_runs(simulate: Simulate | None = None) -> Simulate:
    """``simulate`` (default ``simulator.simulate``) remembering each run by design, scenario and
    seed (the design's name aside: a run does not read it). A known-bad design is the reference
    with one decision changed, so every step before that decision's step grades the same step
    design as the reference: the self-test runs it once. Results are not mutated by the grader
    (it prices a copy)."""
    inner = simulate or simulator.simulate
    runs: dict[tuple[str, int, int], SimulationResult] = {}

    def run(design: Design, scenario: Scenario, seed: int) -> SimulationResult:
        key = (design.model_dump_json(exclude={"name"}), id(scenario), seed)
        if key not in runs:
            runs[key] = inner(design, scenario, seed)
        return runs[key]

    return run


def self_test(material: CourseMaterial, simulate: Simulate | None = None) -> list[SelfTestOutcome]:
    """Grade the reference design and every known-bad design; one outcome each, in course order.
    Runs shared by several designs are simulated once (:func:`shared_runs`)."""
    course = material.course
    simulate = shared_runs(simulate)
    outcomes = [_outcome(material, course.reference_design, frozenset(), simulate)]
    for bad in course.known_bad:
        outcomes.append(
            _outcome(material, bad.file, frozenset(bad.fails), simulate, frozenset(bad.unjudged))
        )
    return outcomes
