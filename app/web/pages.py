"""The learner's pages: the course overview and a page per step (with its decision form)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import RedirectResponse, Response

from app.deps import CourseDep, SessionDep, SettingsDep, UserDep, csrf_token
from app.designs import load_design
from app.models import StepStatus
from app.progress import resume_step, standings
from app.web.step_page import can_see_problems
from app.web.step_request import StepDep
from app.web.step_views import add_step_views
from app.web.submissions import Saved, read_form, save_submission
from app.web.templating import is_htmx, render

router = APIRouter()


@router.get("/", name="overview")
def overview(
    request: Request, course: CourseDep, session: SessionDep, settings: SettingsDep, user: UserDep
) -> Response:
    """The course overview: what it is, how it works, the steps with this learner's status."""
    assert course.course is not None
    saved, _ = load_design(session, user.id if user else None, course.course.id)
    standing = standings(session, user.id if user else None, course, saved)
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
def step_page(at: StepDep) -> Response:
    """One step: rail, narrative, decisions, live estimate, the results of the last run (for the
    design as saved) and the architecture; unavailable steps answer 503 with the reason."""
    context = at.page_context()
    add_step_views(context, at.session, at.material, at.step)
    status_code = 200 if at.step.available else 503
    return render(at.request, "step.html", context, block="step", status_code=status_code)


@router.post("/steps/{slug}", name="save_decisions")
async def save_decisions(at: StepDep) -> Response:
    """Save the step's decisions into the learner's design (a guest learner is made if needed).

    Invalid values answer 422, an expired session 403 and a stale page 409, each with the form
    holding what was typed (app.web.submissions). Without htmx a success redirects back to the
    step (post/redirect/get); with htmx the decisions block comes back marked saved, with the
    rail, results and architecture swapped out of band.
    """
    form = await read_form(at.request)

    def save_and_answer() -> Response:
        outcome = save_submission(at, form)
        if not isinstance(outcome, Saved):
            return outcome
        request = at.request
        if not is_htmx(request):
            url = request.url_for("step", slug=at.step.slug)
            return RedirectResponse(url, status_code=303)
        context = at.page_context(outcome.learner, saved=True)
        add_step_views(context, at.session, at.material, at.step)
        return render(request, "step.html", context, block="decisions", also=("save_oob",))

    return await run_in_threadpool(save_and_answer)
