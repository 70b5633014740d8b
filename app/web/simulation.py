"""``POST /steps/{slug}/run``: save the decisions, run the step's scenarios, grade its checks.

The form is saved first (app.web.submissions: kept input on any error), then the step's
simulations come from the cache or run off the event loop (app.step_runs), the checks are graded,
and the learner's progress on the step and each check's verdict are recorded. With htmx the
answer is the results block, with the rail, the architecture and the new design version swapped
out of band; without JavaScript it redirects to the step page, which shows the same results for
the saved design.

A run is recorded only when every simulation it needs ran: a simulation refused for the design's
own fields (422, the fields named) or one that could not run now (503 with Retry-After: a dead
worker, a busy pool) records no attempt and no verdict; the learner is told why, and that
nothing was counted.
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool
from starlette.responses import RedirectResponse, Response

from app import simpool
from app.check_outcomes import record_check_outcomes
from app.grading.result import StepResult
from app.progress import checks_sha256, inputs_sha256, record_run
from app.step_runs import Runs, cached_runs, ensure_runs, grade_with_runs
from app.web.results import step_results
from app.web.step_request import StepDep, StepRequest
from app.web.step_views import add_step_views
from app.web.submissions import Saved, read_form, save_submission
from app.web.templating import is_htmx, render

router = APIRouter()


@router.post("/steps/{slug}/run", name="run_step")
async def run_step(at: StepDep) -> Response:
    """Save, simulate (cached by design, scenario, seed and simulator version), grade, record.

    Database work, grading and rendering run in worker threads, so a slow commit never holds up
    the event loop; when every simulation is cached the whole answer is made in one thread. The
    simulations run where app.step_runs.simulate_off_loop sends them.
    """
    form = await read_form(at.request)

    def save_and_answer_from_cache() -> Saved | Response:
        """Save; when every simulation is cached, also grade, record and answer (one thread)."""
        outcome = save_submission(at, form)
        if not isinstance(outcome, Saved):
            return outcome
        runs = cached_runs(at.session, outcome.design, at.material, [at.step], counted=True)
        if runs is None:
            return outcome
        return Answer(at, outcome, runs).grade_record_and_render()

    saved = await run_in_threadpool(save_and_answer_from_cache)
    if not isinstance(saved, Saved):
        return saved
    learner = saved.learner
    address = at.request.client.host if at.request.client else None
    client = simpool.client_key(learner.id if learner.email else None, address)
    runs = await ensure_runs(at.session, saved.design, at.material, [at.step], client)
    failed = runs.unavailable() or runs.refusal()
    if failed is not None:  # nothing recorded: not an attempt
        raise failed
    return await run_in_threadpool(Answer(at, saved, runs).grade_record_and_render)


@dataclass(frozen=True)
class Answer:
    """What the run's answer needs once the step is graded."""

    at: StepRequest
    saved: Saved
    runs: Runs

    def grade_record_and_render(self) -> Response:
        """Grade the step with the runs (app.step_runs.grade_with_runs), then
        :meth:`record_and_render`."""
        at = self.at
        graded = grade_with_runs(self.saved.design, at.material, [at.step], self.runs)
        return self.record_and_render(graded.steps[0])

    def record_and_render(self, result: StepResult) -> Response:
        """Record the learner's run and each check's verdict, commit, and answer: a redirect to
        the step without htmx (the page shows the same results), else the results block."""
        at = self.at
        course_id = at.material.course.id
        learner = self.saved.learner
        passed = result.status == "pass"
        session = at.session
        inputs = inputs_sha256(at.course, at.step, self.saved.design)
        record_run(
            session, learner.id, course_id, at.step.slug, result.points, result.max_points,
            passed=passed, inputs=inputs, checks=checks_sha256(at.course, at.step),
        )  # fmt: skip
        record_check_outcomes(session, learner.id, course_id, result)
        session.commit()
        request = at.request
        if not is_htmx(request) and not self.runs.failures:
            url = request.url_for("step", slug=at.step.slug)
            return RedirectResponse(f"{url}#results", status_code=303)
        context = at.page_context(learner)
        results = step_results(result, self.runs)
        add_step_views(context, session, at.material, at.step, results=results)
        return render(request, "step.html", context, block="results", also=("run_oob",))
