"""Step preview: the course designs a step can be previewed with, and what each must fail there.

The designs an instructor can choose are the course's own: ``reference_design`` and each
``known_bad`` entry of course.yaml, named by the file path course.yaml gives (nothing else is
read, so a request cannot point the preview at an arbitrary file).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

from app.course.content import LoadedCourse, LoadedStep
from app.errors import NotFound
from simulator.design import Design
from simulator.files import load_design


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
