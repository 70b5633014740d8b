"""Saving a step's decision form, shared by "Save decisions" and "Run the simulation".

Whatever goes wrong, the learner keeps what they typed: a value out of range or of the wrong
type (422, the message at the field), an expired session or a form from another site (403, a
message at the top), a design saved meanwhile from another tab or device (409, a message at the
top, with each value that differs from the saved design beside it, to keep one or the other
per field or for all: app.web.conflicts). In each case the form comes back filled with the
submitted values and nothing saved is changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from fastapi import Request
from starlette.responses import Response

from app.designs import load_design, save_design
from app.errors import Conflict, CourseUnavailable
from app.grading.grader import design_sha256
from app.models import User
from app.progress import mark_in_progress, mark_needs_rerun
from app.web.auth import current_or_guest_learner
from app.web.conflicts import choose_message, differences, resolve
from app.web.csrf import csrf_ok
from app.web.forms import read_decisions
from app.web.step_request import StepRequest
from app.web.templating import render
from simulator.design import Design

EXPIRED = (
    "Your session expired (or this form came from another site), so nothing was saved. "
    "Your values are still below: submit again to save them."
)


@dataclass(frozen=True)
class Saved:
    """A submitted form that is now the learner's saved design."""

    learner: User
    design: Design
    changed: bool
    """False when the form held the design as it was already saved (nothing was written)."""


def conflict_message(saved_version: int, page_version: str) -> str:
    """The message of a stale tab: which versions, what was kept and how to go on."""
    return (
        f"Your design was saved elsewhere (another tab or device) after this page was loaded: "
        f"saved version {saved_version}, this page had version {page_version}. Your values "
        "below are not saved yet. Where they differ from the saved design, both are listed: "
        "choose which to keep, for each field or for all, then save."
    )


def kept_form(
    at: StepRequest, form: Mapping[str, str], *, status_code: int, message: str = ""
) -> Response:
    """The decisions again, holding the submitted values, with the errors or ``message``.

    With htmx it is the decisions block, retargeted there whichever button was pressed.
    """
    assert at.step.step is not None
    saved = at.page_context()["design"]
    design, errors = read_decisions(at.step.step, form, saved)
    if message:
        errors = {**errors, "": message}
    context = at.page_context(design=design, errors=errors, submitted=form)
    if status_code == 409:
        context["conflicts"] = differences(at.step.step, form, saved)
    response = render(at.request, "step.html", context, block="decisions", status_code=status_code)
    response.headers["HX-Retarget"] = "#decisions"
    response.headers["HX-Reswap"] = "outerHTML"
    return response


async def read_form(request: Request) -> dict[str, str]:
    """The request's form fields that are text (uploads are ignored)."""
    return {k: v for k, v in (await request.form()).items() if isinstance(v, str)}


def save_submission(at: StepRequest, form: Mapping[str, str]) -> Saved | Response:
    """Save the step's decisions from ``form`` into the learner's design.

    Returns Saved, or the response to send instead (the kept form: 403, 409 or 422). A guest
    learner is made for a visitor without one. Whether a step that was run now needs a re-run
    follows from the values that feed it (app.progress.step_standing), so nothing is marked here
    but runs recorded before those were kept. Commits, so that what the learner saved
    is stored before any simulation starts.
    """
    request, session, course, step, user = at.request, at.session, at.course, at.step, at.user
    if not step.available or step.step is None or course.course is None:
        raise CourseUnavailable(f"Step {step.slug!r} is unavailable.")

    def kept(status_code: int, message: str = "") -> Response:
        return kept_form(at, form, status_code=status_code, message=message)

    if not csrf_ok(request, form):
        return kept(403, EXPIRED)
    saved, version = load_design(session, user.id if user else None, course.course.id)
    resolution = resolve(step.step, form, saved)
    design, errors = read_decisions(step.step, resolution.form, saved)
    if design is None:
        return kept(422)
    changed = design_sha256(design) != design_sha256(saved)
    page_version = form.get("design_version", str(version))
    if not page_version.isdigit():
        return kept(422, f"design_version must be a whole number, not {page_version!r}.")
    if page_version != str(version):
        return kept(409, conflict_message(version, page_version))
    if resolution.unchosen:
        return kept(409, choose_message(resolution.unchosen))
    learner = current_or_guest_learner(request, session, user)
    if changed:
        try:
            save_design(session, learner.id, course.course.id, design, version)
        except Conflict:
            return kept(409, conflict_message(version + 1, page_version))
        later = [s.slug for s in course.steps if s.number >= step.number]
        mark_needs_rerun(session, learner.id, course.course.id, later)  # runs without inputs
    mark_in_progress(session, learner.id, course.course.id, step.slug)
    session.commit()
    return Saved(learner, design, changed)
