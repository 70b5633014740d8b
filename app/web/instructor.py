"""The instructor pages under /instructor: the class, one learner, course health, step preview, CSV.

Every route here sits behind ``require_instructor_page``: an anonymous visitor is sent to sign in
(303 to /login, or ``HX-Redirect`` for htmx), a signed-in learner gets 403. ``install(app)``
mounts the routes and the redirect.
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, FastAPI, Query, Request
from starlette.responses import RedirectResponse, Response

from app import simpool
from app.course.content import LoadedCourse
from app.deps import CourseDep, CsrfDep, SessionDep, UserDep, csrf_token
from app.errors import DesignlabError, Forbidden, NotFound
from app.export import grades_csv
from app.instructor.class_progress import class_table, hardest_checks, learner_detail
from app.instructor.health import SelfTests, clean_files, course_version, findings_by_file
from app.instructor.preview import find_design, preview_designs, read_design
from app.models import Role, User
from app.step_runs import ensure_runs, grade_off_loop
from app.web.results import step_results
from app.web.step_request import StepDep
from app.web.step_views import add_step_views
from app.web.templating import is_htmx, render
from simulator.design import Design
from simulator.errors import InputFileError
from simulator.result import SimulationResult
from simulator.scenario import Scenario


class SignInRequired(DesignlabError):
    """An anonymous visitor asked for a page that needs an account."""

    status = 401
    title = "Sign in to continue"


def require_instructor_page(request: Request, user: UserDep) -> User:
    """The signed-in instructor. Raises SignInRequired for a visitor without an account (a guest
    learner has no email) and Forbidden for a learner."""
    if user is None or user.email is None:
        raise SignInRequired("Sign in with an instructor account to see this page.")
    if user.role is not Role.instructor:
        raise Forbidden("Instructor pages are for instructor accounts.")
    return user


InstructorPageDep = Annotated[User, Depends(require_instructor_page)]

router = APIRouter(prefix="/instructor", dependencies=[Depends(require_instructor_page)])


def _self_tests(request: Request) -> SelfTests:
    runs: SelfTests = request.app.state.self_tests
    return runs


def _base(request: Request, user: User, section: str) -> dict[str, Any]:
    return {"user": user, "csrf_token": csrf_token(request), "section": section}


@router.get("", name="instructor_class")
def class_page(
    request: Request, course: CourseDep, session: SessionDep, user: InstructorPageDep
) -> Response:
    """Learners by steps (status colour, points, attempts) and the checks failed first time."""
    table = class_table(session, course)
    context = {
        **_base(request, user, "class"),
        "course": course,
        "meta": course.course,
        "table": table,
        "hardest": hardest_checks(session, course),
    }
    return render(request, "instructor/class.html", context)


@router.get("/learners/{user_id}", name="instructor_learner")
def learner_page(
    request: Request,
    user_id: int,
    course: CourseDep,
    session: SessionDep,
    user: InstructorPageDep,
) -> Response:
    """One learner: each step's status and checks (first and latest verdict), and their design."""
    detail = learner_detail(session, course, user_id)
    if detail is None:
        raise NotFound(f"There is no learner {user_id}.")
    context = {
        **_base(request, user, "class"),
        "course": course,
        "meta": course.course,
        "detail": detail,
    }
    return render(request, "instructor/learner.html", context)


@router.get("/grades.csv", name="instructor_grades_csv")
def grades_csv_download(course: CourseDep, session: SessionDep) -> Response:
    """The class's grades as CSV (app/export.py), as a download."""
    assert course.course is not None
    body = grades_csv(class_table(session, course))
    disposition = f'attachment; filename="{course.course.id}-grades.csv"'
    return Response(
        body,
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": disposition},
    )


@router.get("/health", name="instructor_health")
def health_page(request: Request, user: InstructorPageDep) -> Response:
    """Lint findings per file and the self-test (started on the first visit to a course version).

    Served even when course.yaml does not load (then its problems are the findings and the
    self-test waits). htmx polls this URL for the ``self_test`` block until the run has finished.
    """
    course: LoadedCourse = request.app.state.course_cache.get()
    run = None
    if course.course is not None:
        run = _self_tests(request).start(course.root, course_version(course.root))
    findings = findings_by_file(course)
    context = {
        **_base(request, user, "health"),
        "course": course,
        "meta": course.course,
        "findings": findings,
        "clean": clean_files(course, findings),
        "run": run,
    }
    return render(request, "instructor/health.html", context, block="self_test")


@router.post("/health/self-test", name="instructor_self_test", dependencies=[CsrfDep])
def rerun_self_test(request: Request, course: CourseDep) -> Response:
    """Run the self-test again for the current version of the course (after a simulator change)."""
    _self_tests(request).start(course.root, course_version(course.root), again=True)
    return RedirectResponse(request.url_for("instructor_health"), status_code=303)


@router.get("/steps/{slug}", name="instructor_preview")
async def preview_page(
    user: InstructorPageDep,  # first: refused or sent to sign in before the step is looked up
    at: StepDep,
    design: Annotated[str | None, Query(description="A design file named in course.yaml.")] = None,
) -> Response:
    """Step ``slug`` as a learner sees it, filled with the chosen course design and graded.

    The grade and the results block are a learner's run of the step (app.step_runs, the
    simulation cache and pool, app.web.results), so the preview shows what a learner reads.
    """
    course, step, material, session = at.course, at.step, at.material, at.session
    chosen = find_design(course, design)
    problem = ""
    try:
        shown: Design | None = read_design(course, chosen)
    except InputFileError as exc:
        shown, problem = None, "; ".join(str(e) for e in exc.errors)
    context = at.page_context(
        user,
        design=shown,
        section="preview",
        designs=preview_designs(course),
        chosen=chosen,
        expected=chosen.expected_in(step),
        preview_problem=problem,
        # Step links stay in the preview, with the chosen design (step.html, _results.html).
        preview_query="" if chosen.is_reference else "?" + urlencode({"design": chosen.file}),
    )
    results = None
    if shown is not None and step.available:
        client = simpool.client_key(user.id if user is not None else None, None)
        runs = await ensure_runs(session, shown, material, [step], client)
        graded = await grade_off_loop(shown, material, [step], runs)
        results = step_results(graded.steps[0], runs)
    add_step_views(context, session, material, step, results=results)
    return render(at.request, "instructor/preview.html", context)


def _sign_in_redirect(request: Request, exc: Exception) -> Response:
    """Send the visitor to sign in, coming back here afterwards (``next``)."""
    target = str(request.url_for("login")) + "?" + urlencode({"next": request.url.path})
    if is_htmx(request):
        return Response(status_code=200, headers={"HX-Redirect": target})
    return RedirectResponse(target, status_code=303)


SELF_TEST_CLIENT = "course:self-test"
"""The pool's client of the self-test runs: one of its own, so they take at most one share of the
workers and learners with nothing running go first."""


def _pooled(design: Design, scenario: Scenario, seed: int) -> SimulationResult:
    """``simulator.simulate`` in the app's process pool, bounded like a learner's run."""
    return simpool.pool().simulate(design, scenario, seed, SELF_TEST_CLIENT)


def install(app: FastAPI) -> None:
    """Mount the instructor routes, the sign-in redirect and the self-test runs on ``app``."""
    app.state.self_tests = SelfTests(simulate=_pooled)
    app.add_exception_handler(SignInRequired, _sign_in_redirect)
    app.include_router(router)
