"""Course health: lint findings per file, and the course self-test run in the background.

The lint findings are the loader's problems (the same list ``designlab lint`` prints), grouped by
file. The self-test (app.grading.selftest) grades the reference and every known-bad design, which
takes seconds to minutes, so it runs in a thread per version of the course folder: a version is
the SHA-256 of every file under it and the simulator version, so an edit starts a fresh run and an
unchanged course reuses the last one.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field
from datetime import datetime
from itertools import groupby
from pathlib import Path

from app.course.content import LoadedCourse, Problem
from app.grading.grader import CourseNotGradable, Simulate, load_material
from app.grading.selftest import SelfTestOutcome, self_test
from app.models import utcnow
from simulator import SIMULATOR_VERSION


def lint_order(problems: tuple[Problem, ...]) -> list[Problem]:
    """``problems`` in the order ``designlab lint`` prints them: by file, then line."""
    return sorted(problems, key=lambda p: (p.file, p.line or 0))


@dataclass(frozen=True)
class FileFindings:
    """The lint problems of one file, in line order; ``path`` is relative to the course folder."""

    path: str
    problems: tuple[Problem, ...]

    @property
    def errors(self) -> int:
        """Problems of severity error."""
        return sum(p.severity == "error" for p in self.problems)

    @property
    def warnings(self) -> int:
        """Problems of severity warning."""
        return sum(p.severity == "warning" for p in self.problems)


def _relative(root: Path, file: str) -> str:
    try:
        return Path(file).relative_to(root).as_posix()
    except ValueError:
        return file


def findings_by_file(course: LoadedCourse) -> list[FileFindings]:
    """Every file with a lint problem, in ``designlab lint`` order, with its problems."""
    return [
        FileFindings(_relative(course.root, file), tuple(problems))
        for file, problems in groupby(lint_order(course.problems), key=lambda p: p.file)
    ]


def clean_files(course: LoadedCourse, findings: list[FileFindings]) -> list[str]:
    """The course's YAML and Markdown files without a lint problem, relative and sorted."""
    flagged = {f.path for f in findings}
    files = [p for p in course.root.rglob("*") if p.suffix in (".yaml", ".yml", ".md")]
    return sorted(
        rel for p in files if p.is_file() and (rel := _relative(course.root, str(p))) not in flagged
    )


def course_version(root: Path) -> str:
    """SHA-256 (hex) of every file's path and bytes under ``root`` and the simulator version."""
    digest = hashlib.sha256(SIMULATOR_VERSION.encode())
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


@dataclass
class SelfTestRun:
    """One self-test of one version of the course folder, finished or still running."""

    version: str
    started_at: datetime
    finished_at: datetime | None = None
    outcomes: list[SelfTestOutcome] = field(default_factory=list)
    error: str = ""
    """Why the self-test could not run (the course cannot grade, or it crashed)."""
    done: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def finished(self) -> bool:
        """True once the run has ended, with outcomes or an error."""
        return self.done.is_set()

    @property
    def ok(self) -> bool:
        """True when it finished, without an error, and every design did as intended."""
        return self.finished and not self.error and all(o.ok for o in self.outcomes)

    @property
    def failing(self) -> int:
        """Designs that did not do as intended."""
        return sum(not o.ok for o in self.outcomes)

    @property
    def seconds(self) -> float:
        """Wall time so far, or in all once finished."""
        end = self.finished_at or utcnow()
        return (end - self.started_at).total_seconds()


class SelfTests:
    """Self-test runs by course version, each in its own daemon thread; keeps the latest few.

    ``simulate`` is what the runs simulate with (default ``simulator.simulate`` in the thread;
    the web app passes its process pool's, so a self-test does not slow the pages).
    """

    def __init__(self, keep: int = 4, simulate: Simulate | None = None):
        self.keep = keep
        self.simulate = simulate
        self._lock = threading.Lock()
        self._runs: dict[str, SelfTestRun] = {}

    def get(self, version: str) -> SelfTestRun | None:
        """The run of ``version``, finished or not, or None if none was started."""
        with self._lock:
            return self._runs.get(version)

    def start(self, root: Path, version: str, *, again: bool = False) -> SelfTestRun:
        """The run of ``version``, started now if there is none (or ``again`` and it finished)."""
        with self._lock:
            run = self._runs.get(version)
            if run is not None and not (again and run.finished):
                return run
            run = SelfTestRun(version, utcnow())
            self._runs.pop(version, None)
            self._runs[version] = run
            while len(self._runs) > self.keep:
                self._runs.pop(next(iter(self._runs)))
        thread = threading.Thread(
            target=self._run, args=(run, root), name="designlab-self-test", daemon=True
        )
        thread.start()
        return run

    def _run(self, run: SelfTestRun, root: Path) -> None:
        try:
            run.outcomes = self_test(load_material(root), simulate=self.simulate)
        except CourseNotGradable as exc:
            run.error = f"the course cannot be graded: {exc}"
        except Exception as exc:  # shown on the health page rather than lost in a thread
            run.error = f"the self-test crashed: {type(exc).__name__}: {exc}"
        finally:
            run.finished_at = utcnow()
            run.done.set()
