"""``POST /steps/{slug}/run``: save the decisions, run the step's scenarios, grade its checks.

The form is saved first (app.web.submissions: kept input on any error), then the step's
simulations come from the cache or run off the event loop (app.step_runs), the checks are graded,
and the learner's progress on the step and each check's verdict are recorded. With htmx the
answer is the results block, with the rail, the architecture and the new design version swapped
out of band; without JavaScript it redirects to the step page, which shows the same results for
the saved design.
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import APIRouter, Request
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.responses import RedirectResponse, Response

from app.api.router import MaterialDep
from app.check_outcomes import record_check_outcomes
from app.course.content import LoadedCourse, LoadedStep
from app.grading.grader import CourseMaterial
from app.grading.result import StepResult
from app.progress import record_run
from app.settings import Settings
from app.step_runs import Runs, ensure_runs, grade_off_loop
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
    """Save, simulate (cached by design, scenario, seed and simulator version), grade, record.

    Database writes and rendering run in worker threads, so a slow commit never holds up the
    event loop; the simulations run where app.step_runs.simulate_off_loop sends them.
    """
    step = find_step(course, slug)
    form = await read_form(request)
    outcome = await run_in_threadpool(
        save_submission, request, session, settings, course, step, user, form
    )
    if not isinstance(outcome, Saved):
        return outcome
    runs = await ensure_runs(session, outcome.design, material, [step])
    graded = await grade_off_loop(outcome.design, material, [step], runs)
    answer = Answer(request, session, settings, course, material, step, outcome, runs)
    return await run_in_threadpool(answer.record_and_render, graded.steps[0])


@dataclass(frozen=True)
class Answer:
    """What the run's answer needs once the step is graded."""

    request: Request
    session: Session
    settings: Settings
    course: LoadedCourse
    material: CourseMaterial
    step: LoadedStep
    saved: Saved
    runs: Runs

    def record_and_render(self, result: StepResult) -> Response:
        """Record the learner's run and each check's verdict, commit, and answer: a redirect to
        the step without htmx (the page shows the same results), else the results block."""
        course_id = self.material.course.id
        learner = self.saved.learner
        passed = result.status == "pass"
        record_run(
            self.session,
            learner.id,
            course_id,
            self.step.slug,
            result.points,
            result.max_points,
            passed=passed,
        )
        record_check_outcomes(self.session, learner.id, course_id, result)
        self.session.commit()
        request = self.request
        if not is_htmx(request) and not self.runs.failures:
            url = request.url_for("step", slug=self.step.slug)
            return RedirectResponse(f"{url}#results", status_code=303)
        context = step_page_context(
            request, self.session, self.settings, self.course, self.step, learner
        )
        results = step_results(result, self.runs)
        add_step_views(context, self.session, self.material, self.step, results=results)
        return render(request, "step.html", context, block="results", also=("run_oob",))
