"""Step preview: a step graded for the reference design or one of the known-bad designs.

The designs an instructor can choose are the course's own: ``reference_design`` and each
``known_bad`` entry of course.yaml, named by the file path course.yaml gives (nothing else is
read, so a request cannot point the preview at an arbitrary file).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import PurePosixPath

from app.course.content import LoadedCourse, LoadedStep
from app.errors import NotFound
from app.grading.grader import CourseMaterial, CourseNotGradable, grade
from app.grading.result import InputProblem, StepResult
from simulator.design import Design
from simulator.errors import InputFileError
from simulator.files import load_design
from simulator.pricing import load_pricing


@dataclass(frozen=True)
class PreviewDesign:
    """A design of the course an instructor can preview a step with."""

    file: str
    """Path relative to the course folder, as course.yaml names it."""
    fails: frozenset[str]
    """The checks it must fail, named as in course.yaml (``check-id`` or ``step-id/check-id``);
    empty for the reference."""
    why: str = ""

    @property
    def is_reference(self) -> bool:
        """True for the course's reference design."""
        return not self.fails

    @property
    def label(self) -> str:
        """``reference``, or the file's name without its folder and extension."""
        return "reference" if self.is_reference else PurePosixPath(self.file).stem

    def expected_in(self, step: LoadedStep) -> list[str]:
        """Ids of ``step``'s checks this design must fail, in the step's order."""
        checks = step.step.checks if step.step is not None else []
        return [c.id for c in checks if c.id in self.fails or f"{step.slug}/{c.id}" in self.fails]


def preview_designs(course: LoadedCourse) -> list[PreviewDesign]:
    """The reference design, then every known-bad design in course.yaml order."""
    assert course.course is not None
    meta = course.course
    designs = [PreviewDesign(meta.reference_design, frozenset())]
    designs += [PreviewDesign(bad.file, frozenset(bad.fails), bad.why) for bad in meta.known_bad]
    return designs


def find_design(course: LoadedCourse, file: str | None) -> PreviewDesign:
    """The course design named ``file`` (the reference when None); raises NotFound otherwise."""
    designs = preview_designs(course)
    if file is None:
        return designs[0]
    found = next((d for d in designs if d.file == file), None)
    if found is None:
        raise NotFound(f"{file} is neither the reference nor a known-bad design of this course.")
    return found


def read_design(course: LoadedCourse, design: PreviewDesign) -> Design:
    """Load the design file; raises InputFileError naming file, line and field."""
    return load_design(course.root / design.file)


def material(course: LoadedCourse) -> CourseMaterial:
    """The loaded course with its pricing catalog, ready to grade.

    Raises CourseNotGradable when the catalog cannot be loaded.
    """
    assert course.course is not None
    try:
        pricing = load_pricing(course.root / course.course.pricing)
    except InputFileError as exc:
        raise CourseNotGradable([InputProblem.from_field_error(e) for e in exc.errors]) from exc
    return CourseMaterial(course, pricing)


def grade_step(course: LoadedCourse, step: LoadedStep, design: Design) -> StepResult:
    """``design`` graded on ``step`` alone (its scenarios simulated, nothing else).

    The same app.grading.grader.grade a learner's run uses, over a course of this one step.
    Raises CourseNotGradable when the pricing catalog cannot be loaded.
    """
    graded = material(course)
    subset = CourseMaterial(dataclasses.replace(course, steps=(step,)), graded.pricing)
    (result,) = grade(design, subset).steps
    return result
