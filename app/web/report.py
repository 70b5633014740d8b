"""The report card, and the design file going out and coming back in.

``GET /report`` grades the learner's design as saved against every step, exactly as
``designlab grade design.yaml`` does (same grader, each scenario's own seed, simulations from the
shared cache), so the downloaded file scores the same on the command line. ``GET /design.yaml``
downloads it; ``POST /design`` uploads one to continue from (a step already run needs a
re-run when a value feeding it changed: app.progress.step_standing); ``POST /progress/restart``
keeps the design and starts the steps again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Request
from sqlalchemy import delete
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.responses import RedirectResponse, Response

from app import simpool
from app.course.content import LoadedCourse
from app.course.step_design import course_design
from app.deps import (
    CourseDep,
    CsrfDep,
    MaterialDep,
    SessionDep,
    SettingsDep,
    UserDep,
    csrf_token,
)
from app.designs import load_design, save_design
from app.grading.grader import CourseMaterial, cost_scenario
from app.grading.result import GradeResult, StepResult
from app.models import StepProgress, User
from app.progress import mark_needs_rerun, score_so_far, standings
from app.settings import Settings
from app.step_runs import Runs, ensure_runs, grade_off_loop
from app.web.auth import current_or_guest_learner
from app.web.backlog import shown_drain
from app.web.charts import Chart, cost_chart, fault_name
from app.web.csrf import csrf_ok
from app.web.losses import Losses, losses
from app.web.submissions import EXPIRED
from app.web.templating import NOTICE, render
from simulator.design import Design
from simulator.errors import FieldError, InputFileError
from simulator.files import MAX_FILE_BYTES, dump_yaml, load_model

router = APIRouter()

UPLOAD_FIELD = "design"


@dataclass(frozen=True)
class StepLine:
    """One row of the report card: the step, its grade and what it taught."""

    number: int
    slug: str
    result: StepResult
    lesson: str


@dataclass(frozen=True)
class FaultRow:
    """The final design under one fault scenario."""

    scenario: str
    faults: str
    losses: Losses
    duplicate_effects: int
    tokens_repeated: int
    drain_seconds: float | None
    drain_note: str | None


def first_sentence(text: str) -> str:
    """The first sentence of ``text`` (up to and including the first ". ")."""
    head, dot, _ = text.strip().partition(". ")
    return head + ("." if dot else "")


def step_lines(course: LoadedCourse, graded: GradeResult) -> list[StepLine]:
    """Each step of the grade with its number, slug and one line on what it taught."""
    by_slug = {s.slug: s for s in course.steps}
    lines = []
    for result in graded.steps:
        loaded = by_slug[result.id]
        recap = loaded.step.recap if loaded.step else ""
        lines.append(StepLine(loaded.number, loaded.slug, result, first_sentence(recap)))
    return lines


def fault_rows(material: CourseMaterial, runs: Runs, graded: GradeResult) -> list[FaultRow]:
    """The key durability figures of each step's scenario that injects faults, for the design
    that step judges (each scenario once, at the first step that runs it)."""
    rows = []
    shown: set[str] = set()
    for step in graded.steps:
        name = step.scenario
        result = runs.of_step(step.id, name)
        if name is None or result is None or name in shown:
            continue
        scenario = material.loaded.scenarios[name]
        if not scenario.faults:
            continue
        shown.add(name)
        kinds = dict.fromkeys(fault_name(f.kind) for f in scenario.faults)
        m = result.metrics
        drain_seconds, drain_note = shown_drain(result)
        rows.append(
            FaultRow(
                name,
                ", ".join(kinds),
                losses(m),
                m.duplicate_effects,
                m.tokens_repeated,
                drain_seconds,
                drain_note,
            )
        )
    return rows


async def report_context(
    request: Request,
    session: Session,
    settings: Settings,
    course: LoadedCourse,
    material: CourseMaterial,
    user: User | None,
    design: Design,
    **extra: Any,
) -> dict[str, Any]:
    """Everything report.html shows for ``design``, the learner's saved design (simulating what
    is not cached)."""
    address = request.client.host if request.client else None
    account = user.id if user is not None and user.email else None
    client = simpool.client_key(account, address)
    runs = await ensure_runs(session, design, material, material.loaded.steps, client)
    await run_in_threadpool(session.commit)
    graded = await grade_off_loop(design, material, material.loaded.steps, runs)
    standing = standings(session, user.id if user else None, course, design)
    cost_view: Chart | None = cost_chart(graded.cost) if graded.cost else None
    context = {
        "course": course,
        "meta": course.course,
        "current": None,
        "standing": standing,
        "score": score_so_far(standing),
        "graded": graded,
        "checks_total": sum(len(s.checks) for s in graded.steps),
        "checks_passed": sum(c.status == "pass" for s in graded.steps for c in s.checks),
        "lines": step_lines(course, graded),
        "faults": fault_rows(material, runs, graded),
        "cost": graded.cost,
        "cost_scenario": cost_scenario(material, material.loaded.steps),
        "cost_chart": cost_view,
        "design": design,
        "csrf_token": csrf_token(request),
        "user": user,
        "upload_errors": [],
        "upload_message": "",
        "settings": settings,
    }
    context.update(extra)
    return context


@router.get("/report", name="report")
async def report(
    request: Request,
    course: CourseDep,
    material: MaterialDep,
    session: SessionDep,
    settings: SettingsDep,
    user: UserDep,
) -> Response:
    """The report card of the learner's design as saved."""
    assert course.course is not None
    design, _ = load_design(session, user.id if user else None, course.course.id)
    context = await report_context(request, session, settings, course, material, user, design)
    return render(request, "report.html", context)


@router.get("/design.yaml", name="download_design")
def download_design(course: CourseDep, session: SessionDep, user: UserDep) -> Response:
    """The learner's design as saved, as the design file (contract 1), to keep or grade in CI:
    the fields no step decides at the course's values, which every grade uses
    (app.course.step_design.course_design), so the file holds what was judged."""
    assert course.course is not None
    design, _ = load_design(session, user.id if user else None, course.course.id)
    return Response(
        dump_yaml(course_design(course, design)),
        media_type="application/yaml",
        headers={"Content-Disposition": 'attachment; filename="design.yaml"'},
    )


NO_FILE = "Choose a design.yaml file to upload; nothing was changed."
INVALID = "The file is not a valid design; nothing was changed."


@dataclass(frozen=True)
class Upload:
    """What came of an upload: the design, or why there is none and the status to answer.

    ``status`` is 200 with a design, 403 for a missing or wrong CSRF token (``message`` is
    EXPIRED), 422 for no file chosen (NO_FILE) or a file that is not a valid design (INVALID,
    ``problems`` naming file, line and field).
    """

    design: Design | None
    status: int = 200
    message: str = ""
    problems: tuple[FieldError, ...] = ()


async def _uploaded_design(request: Request) -> Upload:
    """Read the upload form (CSRF token, file field ``design``) into an Upload."""
    form = await request.form(max_files=1, max_fields=4)
    texts = {k: v for k, v in form.items() if isinstance(v, str)}
    if not csrf_ok(request, texts):
        return Upload(None, 403, EXPIRED)
    upload = form.get(UPLOAD_FIELD)
    if not isinstance(upload, UploadFile) or not upload.filename:
        return Upload(None, 422, NO_FILE)
    name = upload.filename
    data = await upload.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        too_large = FieldError(name, None, "", f"larger than {MAX_FILE_BYTES:,} bytes")
        return Upload(None, 422, INVALID, (too_large,))
    try:
        return Upload(load_model(Design, data.decode("utf-8"), name))
    except UnicodeDecodeError:
        return Upload(None, 422, INVALID, (FieldError(name, None, "", "not UTF-8 text"),))
    except InputFileError as exc:
        return Upload(None, 422, INVALID, tuple(exc.errors))


SAME_DESIGN = "The uploaded design is the one already saved: nothing changed, and every run stands."


@router.post("/design", name="upload_design")
async def upload_design(
    request: Request,
    course: CourseDep,
    material: MaterialDep,
    session: SessionDep,
    settings: SettingsDep,
    user: UserDep,
) -> Response:
    """Replace the learner's design with an uploaded design.yaml and go to the report card.

    Nothing is changed when the upload is refused; the answer is the report card of the design
    as saved with the reason above the upload form: 403 for an expired session or a form from
    another site, 422 when no file was chosen or the file is not a valid design (its problems
    listed with file, line and field).
    """
    assert course.course is not None
    upload = await _uploaded_design(request)
    if upload.design is None:
        design, _ = load_design(session, user.id if user else None, course.course.id)
        context = await report_context(
            request,
            session,
            settings,
            course,
            material,
            user,
            design,
            upload_errors=list(upload.problems),
            upload_message=upload.message,
        )
        return render(request, "report.html", context, status_code=upload.status)
    await run_in_threadpool(replace_design, request, session, course, user, upload.design)
    return RedirectResponse(request.url_for("report"), status_code=303)


def replace_design(
    request: Request, session: Session, course: LoadedCourse, user: User | None, design: Design
) -> None:
    """Make ``design`` the learner's (a guest is made if needed) and commit; a step that was run
    needs a re-run when a value feeding it changed (app.progress.step_standing; runs recorded
    before fingerprints were kept are marked here). A design equal to the saved one changes
    nothing (the next page says so): downloading design.yaml and uploading it back costs no
    progress."""
    assert course.course is not None
    learner = current_or_guest_learner(request, session, user)
    saved, version = load_design(session, learner.id, course.course.id)
    if version > 0 and saved == design:
        request.session[NOTICE] = SAME_DESIGN
        session.commit()
        return
    save_design(session, learner.id, course.course.id, design, version)
    mark_needs_rerun(session, learner.id, course.course.id, [s.slug for s in course.steps])
    session.commit()


@router.post("/progress/restart", name="restart", dependencies=[CsrfDep])
def restart(request: Request, course: CourseDep, session: SessionDep, user: UserDep) -> Response:
    """Start the steps again from the design as saved: every step's progress is cleared."""
    assert course.course is not None
    if user is not None:
        session.execute(
            delete(StepProgress).where(
                StepProgress.user_id == user.id, StepProgress.course_id == course.course.id
            )
        )
        session.commit()
    first = course.steps[0].slug
    return RedirectResponse(request.url_for("step", slug=first), status_code=303)
