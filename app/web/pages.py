"""The learner's pages: the course overview and a page per step (with its decision form)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import RedirectResponse, Response

from app.designs import save_design
from app.errors import BadInput, CourseUnavailable
from app.models import StepStatus
from app.progress import mark_in_progress, resume_step, standings
from app.web.auth import current_or_guest_learner
from app.web.deps import CourseDep, CsrfDep, SessionDep, SettingsDep, UserDep, csrf_token
from app.web.forms import read_decisions
from app.web.step_page import can_see_problems, find_step, step_page_context
from app.web.templating import is_htmx, render

router = APIRouter()


@router.get("/", name="overview")
def overview(
    request: Request, course: CourseDep, session: SessionDep, settings: SettingsDep, user: UserDep
) -> Response:
    """The course overview: what it is, how it works, the steps with this learner's status."""
    standing = standings(session, user.id if user else None, course)
    started = any(s.status is not StepStatus.not_started for s in standing.values())
    context = {
        "course": course,
        "meta": course.course,
        "standing": standing,
        "resume": resume_step(course, standing),
        "started": started,
        "show_problems": can_see_problems(user, settings),
        "csrf_token": csrf_token(request),
        "user": user,
    }
    return render(request, "overview.html", context, block="content")


@router.get("/steps/{slug}", name="step")
def step_page(
    request: Request,
    slug: str,
    course: CourseDep,
    session: SessionDep,
    settings: SettingsDep,
    user: UserDep,
) -> Response:
    """One step: rail, narrative, decisions; unavailable steps answer 503 with the reason."""
    step = find_step(course, slug)
    context = step_page_context(request, session, settings, course, step, user)
    return render(
        request, "step.html", context, block="step", status_code=200 if step.available else 503
    )


@router.post("/steps/{slug}", name="save_decisions", dependencies=[CsrfDep])
async def save_decisions(
    request: Request,
    slug: str,
    course: CourseDep,
    session: SessionDep,
    settings: SettingsDep,
    user: UserDep,
) -> Response:
    """Save the step's decisions into the learner's design (a guest learner is made if needed).

    Invalid values answer 422 with the form and its messages. Without htmx a success redirects
    back to the step (post/redirect/get); with htmx the decisions block comes back, marked saved.
    """
    step = find_step(course, slug)
    if not step.available or step.step is None or course.course is None:
        raise CourseUnavailable(f"Step {slug!r} is unavailable.")
    form = {k: v for k, v in (await request.form()).items() if isinstance(v, str)}
    base = step_page_context(request, session, settings, course, step, user)
    design, errors = read_decisions(step.step, form, base["design"])
    if design is None:
        context = step_page_context(
            request, session, settings, course, step, user, errors=errors, submitted=form
        )
        return render(request, "step.html", context, block="decisions", status_code=422)
    learner = current_or_guest_learner(request, session, user)
    expected = _version(form.get("design_version"), base["design_version"])
    save_design(session, learner.id, course.course.id, design, expected)
    mark_in_progress(session, learner.id, course.course.id, step.slug)
    if not is_htmx(request):
        return RedirectResponse(request.url_for("step", slug=slug), status_code=303)
    context = step_page_context(request, session, settings, course, step, learner, saved=True)
    return render(request, "step.html", context, block="decisions")



def _version(sent: str | None, current: int) -> int:
    """The design version the form was rendered with (the current one if the form had none)."""
    if sent is None:
        return current
    try:
        return int(sent)
    except ValueError as exc:
        raise BadInput(f"design_version must be a whole number, not {sent!r}") from exc
