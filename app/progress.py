"""A learner's standing per step: the one place that says whether a step is done, failed or
waits for a re-run, read by the rail, the overview, the step page, the report card and the
instructor's class page.

A run records the fingerprint of the design values that fed it (:func:`inputs_sha256`); a run
stands while the saved design's values for that step are the same. So a step waits for a re-run
exactly when a value that feeds it differs from its last run: a change undone (96 -> 97 -> 96
partitions) marks nothing, and a decision of a later step never marks an earlier one.

A run also records the fingerprint of what judged it (:func:`checks_sha256`: the step's checks,
the scenarios they run and the course's values for the fields the step does not decide). When an
instructor edits a check after a run, the run was judged by a check the course no longer has: it
needs a re-run too (``checks_changed``), and every view shows its stored verdict marked so, never
a verdict of the edited check over the old run.

A step that does not load (a course error) keeps each learner's stored verdict as it was
(``unavailable``): its points still count, and the course's points in all still count its
checks' points when they can be read from its file (app.course.outline).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.course.content import LoadedCourse, LoadedStep
from app.course.step_design import decided_through, fields_known
from app.models import StepProgress, StepStatus, utcnow
from simulator.design import Design


@dataclass(frozen=True)
class StepStanding:
    """What the overview shows for one step: status, points earned and the step's points.

    ``unavailable``: the step does not load (an error in the course's files, not the
    learner's): the stored status and points stand as recorded. ``checks_changed``: the status
    is ``needs_rerun`` (also) because what judges the step changed since the run."""

    status: StepStatus
    points: int
    max_points: int
    unavailable: bool = False
    checks_changed: bool = False

    @property
    def label(self) -> str:
        """The badge text: "not started", "done 8/10", "needs re-run", "unavailable", ..."""
        if self.unavailable:
            words = "unavailable (course error)"
            if self.status is StepStatus.needs_rerun:
                return f"{words}, last run {self.points}/{self.max_points} to re-run"
            if self.status in (StepStatus.passed, StepStatus.failed):
                return f"{words}, last run {self.points}/{self.max_points}"
            return words
        if self.status is StepStatus.passed:
            return f"done {self.points}/{self.max_points}" if self.max_points else "done"
        if self.status is StepStatus.failed:
            return f"{self.points}/{self.max_points}, try again"
        if self.status is StepStatus.needs_rerun and self.checks_changed:
            return "needs re-run: its checks changed"
        return self.status.value.replace("_", " ").replace("rerun", "re-run")


@dataclass(frozen=True)
class ScoreSoFar:
    """The rail's "score so far": points of the runs that still stand for the learner's design
    (a step marked to re-run counts nothing until it is run again), the course's points, how many
    steps wait for a re-run, and how many are unavailable (a course error: their stored points
    count, and their points in all when their file still tells them)."""

    points: int
    max_points: int
    to_rerun: int
    unavailable: int = 0


def score_so_far(standing: dict[str, StepStanding]) -> ScoreSoFar:
    """ScoreSoFar of a learner's standings (from :func:`standings`)."""
    current = [s for s in standing.values() if s.status is not StepStatus.needs_rerun]
    return ScoreSoFar(
        points=sum(s.points for s in current),
        max_points=sum(s.max_points for s in standing.values()),
        to_rerun=len(standing) - len(current),
        unavailable=sum(s.unavailable for s in standing.values()),
    )


def max_points(step: LoadedStep) -> int:
    """Points the step's checks are worth in all; for a step that did not load, its checks'
    points as still readable in its file (app.course.outline); 0 without checks or when they
    cannot be read (see :func:`points_known`)."""
    if step.step is not None:
        return sum(c.points for c in step.step.checks)
    known = step.outline.max_points if step.outline is not None else None
    return known or 0


def points_known(step: LoadedStep) -> bool:
    """False for a step that did not load whose checks' points cannot be read from its file: the
    course's points in all then leave it out."""
    return step.step is not None or (step.outline is not None and step.outline.checks is not None)


def first_decided(course: LoadedCourse) -> dict[str, int]:
    """The number of the step that first decides each design field (dotted path), for every
    field some available step decides. Made once per load of the course."""
    key = "progress:first_decided"
    if key not in course.derived:
        found: dict[str, int] = {}
        for step in course.steps:
            for decision in step.step.decisions if step.step is not None else []:
                found.setdefault(decision.field, step.number)
        course.derived[key] = found
    decided: dict[str, int] = course.derived[key]
    return decided


def _flat(value: Any, prefix: str, out: dict[str, Any]) -> dict[str, Any]:
    if isinstance(value, Mapping) and value:
        for name, inner in value.items():
            _flat(inner, f"{prefix}.{name}" if prefix else str(name), out)
    else:
        out[prefix] = value
    return out


def _fed_paths(course: LoadedCourse, step: LoadedStep) -> frozenset[str]:
    """The design paths that feed ``step``: the fields it and the steps before it decide (the
    rest is the course's neutral design: app.course.step_design)."""
    return decided_through(course, step)


@dataclass(frozen=True)
class _Value:
    """One design value: its path, the path and its parents (``a``, ``a.b``, ``a.b.c``) and its
    canonical JSON text."""

    path: str
    lineage: tuple[str, ...]
    text: str


def _values(design: Design) -> list[_Value]:
    """Every value of ``design`` in path order (flattened once per design)."""
    out = []
    for path, value in sorted(_flat(design.model_dump(mode="json"), "", {}).items()):
        parts = path.split(".")
        lineage = tuple(".".join(parts[: i + 1]) for i in range(len(parts)))
        out.append(_Value(path, lineage, json.dumps(value, sort_keys=True)))
    return out


def _fed(value: _Value, fed: frozenset[str]) -> bool:
    return any(p in fed for p in value.lineage)


def step_inputs(course: LoadedCourse, step: LoadedStep, design: Design) -> dict[str, Any]:
    """The values of ``design`` that feed ``step``, by dotted path (JSON values): the step's own
    decisions and the earlier steps'. A later step's decision does not, so deciding step 9 never
    sends step 4 back; nor does a value no step decides (an uploaded design's): the step judges
    the course's neutral value there (app.course.step_design)."""
    fed = _fed_paths(course, step)
    return {v.path: json.loads(v.text) for v in _values(design) if _fed(v, fed)}


def inputs_sha256(course: LoadedCourse, step: LoadedStep, design: Design) -> str:
    """SHA-256 hex of :func:`step_inputs`, one ``path=JSON`` line per value in path order:
    what a run of ``step`` records, and what a standing compares the saved design's with."""
    return _sha256(course, step, _values(design))


def _sha256(course: LoadedCourse, step: LoadedStep, values: list[_Value]) -> str:
    fed = _fed_paths(course, step)
    digest = hashlib.sha256()
    for value in values:
        if _fed(value, fed):
            digest.update(f"{value.path}={value.text}\n".encode())
    return digest.hexdigest()


def checks_sha256(course: LoadedCourse, step: LoadedStep) -> str | None:
    """SHA-256 hex of what judges ``step`` besides the learner's values: each check's id,
    points, expression, ``needs`` expression, scenario and baseline step, the step's scenario,
    every scenario they run (as loaded) and the course's neutral values for the fields the step
    does not decide (app.course.step_design). None for a step that did not load (unknown). Made
    once per load; what a run records, and what a standing compares with. None also for a step
    lint rejects (it cannot be run again, so its stored verdict stands) and for one whose
    feeding fields are not all known (app.course.step_design.fields_known)."""
    if step.step is None or not step.available or not fields_known(course, step):
        return None
    key = f"progress:checks:{step.slug}"
    if key not in course.derived:
        judged = step.step
        names = [judged.scenario, *(c.scenario for c in judged.checks)]
        decided = decided_through(course, step)
        neutral = _values(course.reference_design) if course.reference_design else []
        text = json.dumps(
            {
                "scenario": judged.scenario,
                "checks": [
                    c.model_dump(
                        mode="json",
                        include={"id", "points", "expr", "needs", "scenario", "baseline_step"},
                    )
                    for c in judged.checks
                ],
                "scenarios": {
                    n: course.scenarios[n].model_dump(mode="json")
                    for n in dict.fromkeys(names)
                    if n and n in course.scenarios
                },
                "neutral": [f"{v.path}={v.text}" for v in neutral if not _fed(v, decided)],
            },
            sort_keys=True,
        )
        course.derived[key] = hashlib.sha256(text.encode()).hexdigest()
    found: str = course.derived[key]
    return found


def step_standing(
    step: LoadedStep,
    row: StepProgress | None,
    inputs: str | None,
    checks: str | None = None,
) -> StepStanding:
    """The one rule of a step's state, from the learner's progress row (None: never opened),
    the fingerprint of the values that feed the step in the saved design (``inputs``, from
    :func:`inputs_sha256`; None when the design is not known) and of what judges the step now
    (``checks``, from :func:`checks_sha256`; None when unknown).

    A run (passed or failed) whose recorded fingerprint differs from ``inputs``, or whose
    recorded checks fingerprint differs from ``checks`` (``checks_changed``), needs a re-run and
    keeps its points for the record (the score so far leaves them out). A fingerprint not
    recorded (a row from before it was kept) or not known now leaves the stored status as it is.
    A step that did not load is ``unavailable`` with its stored status and points."""
    top = max_points(step)
    unavailable = not step.available
    if row is None:
        return StepStanding(StepStatus.not_started, 0, top, unavailable)
    status = row.status
    ran = status in (StepStatus.passed, StepStatus.failed)
    recorded = row.inputs_sha256
    if ran and recorded is not None and inputs is not None and recorded != inputs:
        status = StepStatus.needs_rerun
    judged = row.checks_sha256
    changed = ran and judged is not None and checks is not None and judged != checks
    if changed:
        status = StepStatus.needs_rerun
    if unavailable and not points_known(step):
        top = row.max_points  # the step's points when this run was judged
    return StepStanding(status, row.points, top, unavailable, changed)


def standings(
    session: Session, user_id: int | None, course: LoadedCourse, design: Design | None
) -> dict[str, StepStanding]:
    """Standing per step slug for this learner whose saved design is ``design`` (see
    :func:`step_standing`); every step is present (not started by default)."""
    assert course.course is not None
    rows: dict[str, StepProgress] = {}
    if user_id is not None:
        rows = {
            row.step_id: row
            for row in session.scalars(
                select(StepProgress).where(
                    StepProgress.user_id == user_id,
                    StepProgress.course_id == course.course.id,
                )
            )
        }
    return standings_of(course, rows, design)


def standings_of(
    course: LoadedCourse, rows: Mapping[str, StepProgress], design: Design | None
) -> dict[str, StepStanding]:
    """:func:`step_standing` of every step of ``course`` from a learner's progress ``rows`` (by
    step slug) and saved ``design`` (None: the stored statuses as they are). A step whose
    feeding fields are not all known (an earlier step did not load and its decisions cannot be
    read) keeps its stored status: whether its run still stands cannot be told."""
    out = {}
    values: list[_Value] | None = None
    for step in course.steps:
        row = rows.get(step.slug)
        inputs = None
        known = row is not None and row.inputs_sha256 is not None and design is not None
        if known and design is not None and fields_known(course, step):
            values = _values(design) if values is None else values
            inputs = _sha256(course, step, values)
        out[step.slug] = step_standing(step, row, inputs, checks_sha256(course, step))
    return out


def resume_step(course: LoadedCourse, standing: dict[str, StepStanding]) -> LoadedStep | None:
    """The step to continue at: the first available one not passed; None when all are passed."""
    return next(
        (
            s
            for s in course.steps
            if s.available and standing[s.slug].status is not StepStatus.passed
        ),
        None,
    )


def mark_in_progress(session: Session, user_id: int, course_id: str, step_id: str) -> None:
    """Record that the learner has started the step (a no-op once any attempt is recorded)."""
    exists = session.scalar(
        select(StepProgress.id).where(
            StepProgress.user_id == user_id,
            StepProgress.course_id == course_id,
            StepProgress.step_id == step_id,
        )
    )
    if exists is None:
        session.add(
            StepProgress(
                user_id=user_id,
                course_id=course_id,
                step_id=step_id,
                status=StepStatus.in_progress,
                score=0.0,
                points=0,
                max_points=0,
                attempts=0,
            )
        )


def _row(session: Session, user_id: int, course_id: str, step_id: str) -> StepProgress:
    """The learner's progress row for a step, added (not started) when there is none."""
    row = session.scalar(
        select(StepProgress).where(
            StepProgress.user_id == user_id,
            StepProgress.course_id == course_id,
            StepProgress.step_id == step_id,
        )
    )
    if row is None:
        row = StepProgress(
            user_id=user_id,
            course_id=course_id,
            step_id=step_id,
            status=StepStatus.not_started,
            score=0.0,
            points=0,
            max_points=0,
            attempts=0,
        )
        session.add(row)
    return row


def record_run(
    session: Session,
    user_id: int,
    course_id: str,
    step_id: str,
    points: int,
    max_points: int,
    passed: bool,
    inputs: str | None = None,
    checks: str | None = None,
) -> StepProgress:
    """Record a graded run of a step: status passed or failed, its points, one more attempt,
    ``inputs``, the fingerprint of the design values that fed it (:func:`inputs_sha256`), and
    ``checks``, the fingerprint of what judged it (:func:`checks_sha256`)."""
    row = _row(session, user_id, course_id, step_id)
    now = utcnow()
    row.inputs_sha256 = inputs
    row.checks_sha256 = checks
    row.status = StepStatus.passed if passed else StepStatus.failed
    row.points = points
    row.max_points = max_points
    row.score = points / max_points if max_points else (1.0 if passed else 0.0)
    row.attempts = (row.attempts or 0) + 1
    row.first_attempt_at = row.first_attempt_at or now
    row.last_attempt_at = now
    return row


def mark_needs_rerun(
    session: Session, user_id: int, course_id: str, step_ids: Iterable[str]
) -> list[str]:
    """Mark the steps among ``step_ids`` that were run (passed or failed) before fingerprints
    were kept (no ``inputs_sha256``) as needing a re-run, because the design they were graded on
    changed. A run with a fingerprint is judged by :func:`step_standing` instead, so an undone
    change marks nothing. Returns the ids marked."""
    wanted = list(step_ids)
    if not wanted:
        return []
    rows = session.scalars(
        select(StepProgress).where(
            StepProgress.user_id == user_id,
            StepProgress.course_id == course_id,
            StepProgress.step_id.in_(wanted),
            StepProgress.status.in_([StepStatus.passed, StepStatus.failed]),
            StepProgress.inputs_sha256.is_(None),
        )
    )
    marked = []
    for row in rows:
        row.status = StepStatus.needs_rerun
        marked.append(row.step_id)
    return marked
