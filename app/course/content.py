"""What the loader hands to the rest of the app: the course, its steps and every problem found."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from app.course.models import Course, Step
from app.course.outline import StepOutline
from simulator.design import Design
from simulator.errors import FieldError
from simulator.files import Lines, line_of
from simulator.scenario import Scenario

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Problem:
    """One lint finding: severity, file, 1-based line (or None), dotted field and message.

    ``step`` is the folder of the step it belongs to (an error there makes that step unavailable),
    or None for a course-wide problem.
    """

    severity: Severity
    file: str
    line: int | None
    field: str
    message: str
    step: str | None = None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        what = f"{self.field}: {self.message}" if self.field else self.message
        return f"{where}: {self.severity}: {what}"

    def to_field_error(self) -> FieldError:
        """The same problem as a simulator FieldError (drops severity and step)."""
        return FieldError(self.file, self.line, self.field, self.message)

    @classmethod
    def from_field_error(
        cls, err: FieldError, severity: Severity = "error", step: str | None = None
    ) -> Problem:
        """A Problem from a simulator FieldError (YAML or pydantic validation)."""
        return cls(severity, err.file, err.line, err.field, err.message, step)


def counted(count: int, noun: str) -> str:
    """``count`` with its noun, singular for one: ``1 error``, ``3 errors``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def lint_summary(steps: int, errors: int, warnings: int) -> str:
    """The last line of ``designlab lint`` and the health page's: ``13 steps: 1 error, 0
    warnings``."""
    return f"{counted(steps, 'step')}: {counted(errors, 'error')}, {counted(warnings, 'warning')}"


def folder_slug(folder: str) -> str:
    """A step folder's name without its number: the step's id (``04-exactly-once-effects`` ->
    ``exactly-once-effects``)."""
    return re.sub(r"^\d+[-_]", "", folder)


@dataclass(frozen=True)
class LoadedStep:
    """A step folder as loaded: the parsed Step (None when it could not be parsed) and its text."""

    folder: str
    number: int
    """1-based position in course.yaml."""
    path: Path
    step: Step | None
    narrative: str = ""
    """narrative.md as Markdown source ("" when missing)."""
    lines: Lines = field(default_factory=dict)
    """Line of every key path in step.yaml, for problems that point into it."""
    problems: tuple[Problem, ...] = ()
    salvaged: Step | None = None
    """When step.yaml parsed but did not validate: the parts of it that did (app.course.salvage),
    which lint still checks so that one mistake does not hide the others; None otherwise. The
    step stays unavailable (``step`` is None)."""
    dropped: Mapping[tuple[str | int, ...], tuple[int, ...]] = field(default_factory=dict)
    """Positions ``salvaged`` left out, by the path of their list in step.yaml
    (``("checks",): (2,)``): lint's locations are mapped back to step.yaml's through them."""
    spelled_check_ids: tuple[str, ...] = ()
    """When ``step`` is None: every check id step.yaml spells, including those of checks that
    did not validate (known-bad entries may name them)."""
    outline: StepOutline | None = None
    """What could still be read of a step.yaml that did not load (app.course.outline): the
    fields its decisions set and its checks' points; None when the step loaded or its file could
    not be read at all."""

    @property
    def slug(self) -> str:
        """The step's id (its URL part); when step.yaml did not load, derived from the folder
        (lint requires a step's id to be its folder's name without the number)."""
        if self.step is not None:
            return self.step.id
        return folder_slug(self.folder)

    @property
    def title(self) -> str:
        """The step's title; when step.yaml did not load, the title still readable in it, else
        its folder name."""
        if self.step is not None:
            return self.step.title
        if self.outline is not None and self.outline.title:
            return self.outline.title
        return self.folder

    @property
    def errors(self) -> tuple[Problem, ...]:
        """Problems of severity error."""
        return tuple(p for p in self.problems if p.severity == "error")

    @property
    def available(self) -> bool:
        """True when the step parsed and no rule found an error in it."""
        return self.step is not None and not self.errors

    @property
    def step_file(self) -> Path:
        """The step's step.yaml."""
        return self.path / "step.yaml"

    @property
    def narrative_file(self) -> Path:
        """The step's narrative.md."""
        return self.path / "narrative.md"

    @property
    def linted(self) -> Step | None:
        """The step as lint checks it: ``step``, else what ``salvaged`` kept of it."""
        return self.step if self.step is not None else self.salvaged

    def file_loc(self, loc: tuple[str | int, ...]) -> tuple[str | int, ...]:
        """``loc`` in :attr:`linted` as a path in step.yaml: a list position counts the entries
        ``salvaged`` dropped before it (``("checks", 1)`` is ``("checks", 2)`` when check 0
        did not validate). The identity for a step that loaded."""
        if not self.dropped:
            return loc
        out: list[str | int] = []
        for part in loc:
            gone = self.dropped.get(tuple(out), ())
            if isinstance(part, int) and gone:
                kept = [i for i in range(part + len(gone) + 1) if i not in gone]
                part = kept[part]
            out.append(part)
        return tuple(out)

    def line_of(self, *loc: str | int) -> int | None:
        """Line in step.yaml of a key path of :attr:`linted` such as ``("decisions", 2,
        "field")``."""
        return line_of(self.lines, self.file_loc(loc)) if self.lines else None

    def problem(self, severity: Severity, loc: tuple[str | int, ...], message: str) -> Problem:
        """A problem at ``loc`` of :attr:`linted` (file, line and dotted field of step.yaml)."""
        at = self.file_loc(loc)
        field = ".".join(str(p) for p in at)
        line = line_of(self.lines, at) if self.lines else None
        return Problem(severity, str(self.step_file), line, field, message, self.folder)


def linted_steps(course: LoadedCourse) -> Iterator[tuple[LoadedStep, Step]]:
    """Each step lint can check, with its Step: those that loaded and what was salvaged of those
    that parsed but did not validate (LoadedStep.linted)."""
    for step in course.steps:
        if step.linted is not None:
            yield step, step.linted


@dataclass(frozen=True)
class LoadedCourse:
    """The whole course folder: course.yaml, its steps in order, scenarios, reference design."""

    root: Path
    course: Course | None
    """None when course.yaml could not be loaded (then nothing else is)."""
    steps: tuple[LoadedStep, ...] = ()
    scenarios: dict[str, Scenario] = field(default_factory=dict)
    """Valid scenarios by file stem (``peak`` for scenarios/peak.yaml)."""
    reference_design: Design | None = None
    course_lines: Lines = field(default_factory=dict)
    problems: tuple[Problem, ...] = ()
    """Every problem, course-wide and per step, in the order found."""
    derived: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)
    """What is computed from this load alone and read on every request (a step's narrative as
    HTML), kept with it so that a reload of the folder starts afresh."""

    @property
    def course_file(self) -> Path:
        """steps/course.yaml."""
        return self.root / "course.yaml"

    @property
    def errors(self) -> tuple[Problem, ...]:
        """Problems of severity error."""
        return tuple(p for p in self.problems if p.severity == "error")

    @property
    def warnings(self) -> tuple[Problem, ...]:
        """Problems of severity warning."""
        return tuple(p for p in self.problems if p.severity == "warning")

    @property
    def summary(self) -> str:
        """``13 steps: 1 error, 0 warnings`` (:func:`lint_summary`)."""
        return lint_summary(len(self.steps), len(self.errors), len(self.warnings))

    def step(self, slug: str) -> LoadedStep | None:
        """The step whose slug (id) is ``slug``, or None."""
        return next((s for s in self.steps if s.slug == slug), None)

    def next_step(self, current: LoadedStep) -> LoadedStep | None:
        """The step after ``current`` in course order, or None for the last."""
        return self.steps[current.number] if current.number < len(self.steps) else None
