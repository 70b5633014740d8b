"""The grade result (contract 3): one JSON shape for the browser, the API and the CLI.

Shaped after grading formats people already know (Exercism's results.json, PrairieLearn's
score): a status, a score from 0 to 1, points, and per step the checks in declared order, each
with its message and the explanation in the learner's numbers. The JSON holds no timestamps or
timings, so the same design, course, seed and simulator version give byte-identical output.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from simulator.errors import FieldError
from simulator.result import Cost, Metrics

SCHEMA_VERSION = 1
"""Bumped when a field changes meaning or goes away; adding a field keeps the version."""

Status = Literal["pass", "fail", "error"]
"""A step's or a grade's status."""

CheckStatus = Literal["pass", "fail", "not_exercised", "error"]
"""A check's status: ``not_exercised`` when the run never produced what the check judges (its
``needs`` was false: no model call, no event processed): 0 points, and not a pass."""

FAILED = frozenset({"fail", "not_exercised"})
"""Check statuses that count as a failure of the design (0 points, not an error of the grade)."""


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CheckResult(_Out):
    """One check of a step: its verdict, points and the reason in the learner's numbers."""

    id: str
    title: str
    kind: Literal["simulated", "design_review"] = Field(
        description="simulated: the verdict is a figure of the run; design_review: it reads the "
        "design's structure only (at most 20 % of the course's points)."
    )
    status: CheckStatus = Field(
        description="pass, fail, not_exercised (the run never produced what the check judges, "
        "so nothing was judged: 0 points) or error (the check could not run)."
    )
    points: int = Field(description="Points earned: the check's points when it passes, else 0.")
    max_points: int
    message: str = Field(description="The check's pass or fail message, or why it could not run.")
    explanation: str = Field(description="The formula filled with the design's own figures.")
    hint: str = ""
    concept: str = Field("", description="Anchor of the narrative paragraph that teaches it.")
    scenario: str | None = Field(
        None,
        description="The scenario whose run this check judged when it is not the step's own "
        "(null: the step's scenario, or none).",
    )


class StepResult(_Out):
    """One step: its checks in declared order and, when it simulates, the metrics and the cost."""

    id: str
    number: int | None = Field(
        None, description="The step's 1-based place in the course (a grade of some steps skips)."
    )
    title: str
    status: Status
    points: int
    max_points: int
    scenario: str | None = Field(description="The scenario the step simulates, if any.")
    seed: int | None = Field(description="The seed its scenario ran with, if any.")
    message: str = ""
    checks: list[CheckResult] = Field(default_factory=list)
    metrics: Metrics | None = None
    cost: Cost | None = None
    truncated: bool = Field(False, description="True when a bound cut the step's simulation short.")


class InputProblem(_Out):
    """One problem with the input: file, 1-based line (or null), dotted field and message."""

    file: str
    line: int | None
    field: str
    message: str

    @classmethod
    def from_field_error(cls, error: FieldError) -> InputProblem:
        """From the simulator's FieldError."""
        return cls(file=error.file, line=error.line, field=error.field, message=error.message)

    def __str__(self) -> str:
        return str(FieldError(self.file, self.line, self.field, self.message))


class GradeResult(_Out):
    """The whole grade of one design against the course (``schema_version`` 1).

    ``status`` is pass when every check passes, fail when any check fails or is not exercised,
    and error when the design could not be read (``errors`` says where) or a check or simulation
    could not run.
    ``score`` is points / max_points (0 when there are no points); null when a step's points
    are unknown (its step.yaml did not load and its checks could not be read from it). A step
    that did not load but whose checks can still be read lists them as ``error`` checks, so
    ``max_points`` keeps the course's points in all.
    """

    schema_version: int = SCHEMA_VERSION
    status: Status
    score: float | None = Field(
        ge=0,
        le=1,
        description="points / max_points; null when a step's points are unknown (a step that "
        "did not load and whose checks could not be read from its file).",
    )
    points: int
    max_points: int
    seed: int | None = Field(
        description="The seed every scenario ran with; null when each used its own (see steps)."
    )
    simulator_version: str
    message: str
    course: str = Field("", description="The course id.")
    design_name: str = ""
    design_sha256: str = Field("", description="SHA-256 of the design's canonical JSON.")
    budget_usd: float | None = None
    cost: Cost | None = Field(
        None,
        description=(
            "The month of the graded design as a whole (not a step's design), priced from its "
            "own simulation of the last scenario without faults the course reads; null for a "
            "grade of part of the course."
        ),
    )
    cost_scenario: str | None = Field(
        None,
        description="The scenario whose simulated load ``cost`` is a month of (its repeats "
        "and retries included); null when there is no cost.",
    )
    errors: list[InputProblem] = Field(default_factory=list)
    not_judged: list[str] = Field(
        default_factory=list,
        description="Fields of the design no step of the course decides whose value differs "
        "from the course's, each as 'field: value in the file, value judged': every step, and "
        "the bill, use the course's value (a course judges only what it teaches).",
    )
    steps: list[StepResult] = Field(default_factory=list)

    @property
    def failed_checks(self) -> list[tuple[str, str]]:
        """(step id, check id) of every check that did not pass, in course order."""
        return [(s.id, c.id) for s in self.steps for c in s.checks if c.status != "pass"]
