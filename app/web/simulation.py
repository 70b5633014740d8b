"""``POST /steps/{slug}/run``: save the decisions, run the step's scenarios, grade its checks.

The form is saved first (app.web.submissions: kept input on any error), then the step's
simulations come from the cache or run off the event loop (app.step_runs), the checks are graded,
and the learner's progress on the step and each check's verdict are recorded. With htmx the
answer is the results block, with the rail, the architecture and the new design version swapped
out of band; without JavaScript it redirects to the step page, which shows the same results for
the saved design.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import RedirectResponse, Response

from app.api.router import MaterialDep
from app.check_outcomes import record_check_outcomes
from app.progress import record_run
from app.step_runs import ensure_runs, grade_off_loop
from app.web.deps import CourseDep, SessionDep, SettingsDep, UserDep
from app.web.results import step_results
from app.web.step_page import find_step, step_page_context
from app.web.step_views import add_step_views
from app.web.submissions import Saved, read_form, save_submission
from app.web.templating import is_htmx, render

router = APIRouter()


@router.post("/steps/{slug}/run", name="run_step")
async def run_step(
    request: Request,
    slug: str,
    course: CourseDep,
    material: MaterialDep,
    session: SessionDep,
    settings: SettingsDep,
    user: UserDep,
) -> Response:
    """Save, simulate (cached by design, scenario, seed and simulator version), grade, record."""
    step = find_step(course, slug)
    form = await read_form(request)
    outcome = save_submission(request, session, settings, course, step, user, form)
    if not isinstance(outcome, Saved):
        return outcome
    assert course.course is not None
    runs = await ensure_runs(session, outcome.design, material, [step])
    session.commit()
    graded = await grade_off_loop(outcome.design, material, [step], runs)
    result = graded.steps[0]
    record_run(
        session,
        outcome.learner.id,
        course.course.id,
        step.slug,
        result.points,
        result.max_points,
        passed=result.status == "pass",
    )
    record_check_outcomes(session, outcome.learner.id, course.course.id, result)
    session.commit()
    if not is_htmx(request) and not runs.failures:
        url = request.url_for("step", slug=slug)
        return RedirectResponse(f"{url}#results", status_code=303)
    context = step_page_context(request, session, settings, course, step, outcome.learner)
    add_step_views(context, session, material, step, results=step_results(result, runs))
    return render(request, "step.html", context, block="results", also=("run_oob",))
