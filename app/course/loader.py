"""Load the course folder (steps/) into a LoadedCourse, never letting one bad file stop the rest.

Layout read here::

    steps/course.yaml              the Course (app/course/models.py)
    steps/<folder>/step.yaml       one Step per folder named in course.yaml ``steps``
    steps/<folder>/narrative.md    its Markdown narrative
    steps/scenarios/<name>.yaml    the Scenarios steps refer to by name
    steps/designs/reference.yaml   the reference Design (course.yaml ``reference_design``)

Every problem names file, line and field. After parsing, the lint rules (app/course/lint.py) run;
an error attached to a step makes that step unavailable, the others stay up.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from app.course.content import LoadedCourse, LoadedStep, Problem
from app.course.lint import run_rules
from app.course.models import Course, Step
from app.course.outline import StepOutline, read_outline
from app.course.salvage import salvage, spelled_check_ids
from simulator.design import Design
from simulator.errors import FieldError, InputFileError
from simulator.files import Lines, parse_yaml, read_text, validation_errors
from simulator.scenario import Scenario

M = TypeVar("M", bound=BaseModel)

SCENARIOS_DIR = "scenarios"


@dataclasses.dataclass
class _Loaded:
    """One YAML file as read: the model (None when refused), the mapping as parsed (None when it
    did not parse), the pydantic error (when it did not validate) and every problem."""

    model: Any
    lines: Lines
    problems: list[Problem]
    data: dict[str, Any] | None = None
    error: ValidationError | None = None


def _read_yaml_model(model: type[BaseModel], path: Path, step: str | None = None) -> _Loaded:
    filename = str(path)
    if not path.is_file():
        return _Loaded(None, {}, [Problem("error", filename, None, "", "file is missing", step)])
    try:
        data, lines = parse_yaml(read_text(path), filename)
    except InputFileError as exc:
        return _Loaded(None, {}, [Problem.from_field_error(e, step=step) for e in exc.errors])
    if not isinstance(data, dict):
        err = FieldError(filename, 1, "", "expected a mapping at the top level")
        return _Loaded(None, lines, [Problem.from_field_error(err, step=step)])
    try:
        return _Loaded(model.model_validate(data), lines, [], data)
    except ValidationError as exc:
        errors = validation_errors(exc, filename, lines, data)
        found = [Problem.from_field_error(e, step=step) for e in errors]
        return _Loaded(None, lines, found, data, exc)


def _load_yaml_model(
    model: type[M], path: Path, step: str | None = None
) -> tuple[M | None, Lines, list[Problem]]:
    """Parse and validate one YAML file; on failure return None and every problem found."""
    loaded = _read_yaml_model(model, path, step)
    return loaded.model, loaded.lines, loaded.problems


def _load_step(root: Path, folder: str, number: int) -> LoadedStep:
    path = root / folder
    if not path.is_dir():
        problem = Problem("error", str(path), None, "", "step folder is missing", folder)
        return LoadedStep(folder, number, path, None, problems=(problem,))
    loaded = _read_yaml_model(Step, path / "step.yaml", folder)
    step, lines, problems = loaded.model, loaded.lines, loaded.problems
    salvaged: Step | None = None
    dropped: dict[tuple[str | int, ...], tuple[int, ...]] = {}
    if loaded.data is not None and loaded.error is not None:
        salvaged, dropped = salvage(loaded.data, loaded.error, folder)
    outline = _outline(path / "step.yaml") if step is None else None
    narrative = ""
    narrative_file = path / "narrative.md"
    try:
        narrative = read_text(narrative_file) if narrative_file.is_file() else ""
    except InputFileError as exc:
        problems += [Problem.from_field_error(e, step=folder) for e in exc.errors]
    if not narrative_file.is_file():
        problems.append(Problem("error", str(narrative_file), None, "", "file is missing", folder))
    elif not narrative.strip():
        problems.append(Problem("warning", str(narrative_file), None, "", "file is empty", folder))
    spelled = spelled_check_ids(loaded.data) if step is None else ()
    return LoadedStep(
        folder,
        number,
        path,
        step,
        narrative,
        lines,
        tuple(problems),
        salvaged,
        dropped,
        spelled,
        outline,
    )


def _outline(path: Path) -> StepOutline | None:
    """What can still be read of a step.yaml that did not load (app.course.outline); None when
    the file is missing or is not text."""
    if not path.is_file():
        return None
    try:
        return read_outline(read_text(path))
    except InputFileError:
        return None


def _load_scenarios(root: Path) -> tuple[dict[str, Scenario], list[Problem]]:
    scenarios: dict[str, Scenario] = {}
    problems: list[Problem] = []
    folder = root / SCENARIOS_DIR
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
        scenario, lines, found = _load_yaml_model(Scenario, path)
        problems += found
        if scenario is not None:
            scenarios[path.stem] = scenario
            if scenario.name != path.stem:
                problems.append(
                    Problem(
                        "warning",
                        str(path),
                        lines.get(("name",)),
                        "name",
                        f"name {scenario.name!r} differs from the file name {path.stem!r}; "
                        "steps refer to scenarios by file name",
                    )
                )
    return scenarios, problems


def _unlisted_folders(root: Path, course: Course) -> list[Problem]:
    listed = set(course.steps) | {SCENARIOS_DIR, "designs"}
    return [
        Problem("warning", str(entry), None, "", "step folder not listed in course.yaml steps")
        for entry in sorted(root.iterdir())
        if entry.is_dir() and entry.name not in listed and (entry / "step.yaml").exists()
    ]


def _listed_once(
    course: Course, course_file: Path, lines: Lines
) -> tuple[list[str], list[Problem]]:
    """course.yaml's step folders, each once, and an error at each repeated listing (the folder
    is loaded once, at its first place)."""
    first: dict[str, int] = {}
    problems: list[Problem] = []
    for i, folder in enumerate(course.steps):
        if folder in first:
            problems.append(
                Problem(
                    "error",
                    str(course_file),
                    lines.get(("steps", i)) or lines.get(("steps",)),
                    f"steps.{i}",
                    f"{folder} is listed twice (first as step {first[folder] + 1}); it is loaded "
                    "once, there",
                )
            )
        else:
            first[folder] = i
    return list(first), problems


def load_course(root: Path) -> LoadedCourse:
    """Load the course folder ``root`` (steps/); never raises for bad content.

    Returns a LoadedCourse whose ``problems`` lists every error and warning, with file and line.
    ``course`` is None only when course.yaml itself cannot be loaded.
    """
    course_file = root / "course.yaml"
    if not root.is_dir():
        problem = Problem("error", str(root), None, "", "course folder does not exist")
        return LoadedCourse(root, None, problems=(problem,))
    course, course_lines, problems = _load_yaml_model(Course, course_file)
    if course is None:
        return LoadedCourse(root, None, course_lines=course_lines, problems=tuple(problems))
    folders, repeats = _listed_once(course, course_file, course_lines)
    problems += repeats
    steps = [_load_step(root, folder, i) for i, folder in enumerate(folders, start=1)]
    scenarios, scenario_problems = _load_scenarios(root)
    reference: Design | None = None
    reference_file = root / course.reference_design
    if reference_file.is_file():
        reference, _, found = _load_yaml_model(Design, reference_file)
        scenario_problems += found
    loaded = LoadedCourse(
        root,
        course,
        tuple(steps),
        scenarios,
        reference,
        course_lines,
        tuple(problems + scenario_problems + _unlisted_folders(root, course)),
    )
    return _with_rules(loaded)


def _with_rules(loaded: LoadedCourse) -> LoadedCourse:
    """Run the lint rules and attach each problem to its step."""
    found = run_rules(loaded)
    steps = tuple(
        dataclasses.replace(s, problems=s.problems + tuple(p for p in found if p.step == s.folder))
        for s in loaded.steps
    )
    step_problems = [p for s in loaded.steps for p in s.problems]
    return dataclasses.replace(
        loaded, steps=steps, problems=tuple(step_problems) + loaded.problems + tuple(found)
    )


def _fingerprint(root: Path) -> tuple[Any, ...]:
    """(path, mtime_ns, size) of every file under ``root``: cheap, no file is read."""
    entries = []
    for folder, _dirs, files in os.walk(root):
        for name in files:
            try:
                stat = os.stat(os.path.join(folder, name))
            except OSError:
                continue
            entries.append((folder, name, stat.st_mtime_ns, stat.st_size))
    return tuple(sorted(entries))


class CourseCache:
    """Holds the loaded course; with ``watch`` on, reloads it when a file under ``root`` changes.

    Thread-safe: requests served from the thread pool share one instance.
    """

    def __init__(self, root: Path, watch: bool):
        self.root = root
        self.watch = watch
        self._lock = threading.Lock()
        self._fingerprint: tuple[Any, ...] | None = None
        self._course: LoadedCourse | None = None

    def get(self) -> LoadedCourse:
        """The current course, reloaded first if watching and anything under ``root`` changed."""
        with self._lock:
            if self._course is None or self.watch:
                fingerprint = _fingerprint(self.root)
                if self._course is None or fingerprint != self._fingerprint:
                    self._course = load_course(self.root)
                    self._fingerprint = fingerprint
            return self._course
