"""``StepDep``: the one dependency of every route under ``/steps/{slug}``.

The step page, saving its decisions, the live estimate and a simulation run each read the same
seven things (the request, the course and its grading material, the step, the database session,
the settings, the signed-in user); this bundles them so a route names one parameter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, Request
from sqlalchemy.orm import Session

from app.course.content import LoadedCourse, LoadedStep
from app.deps import CourseDep, MaterialDep, SessionDep, SettingsDep, UserDep
from app.grading.grader import CourseMaterial
from app.models import User
from app.settings import Settings
from app.web.step_page import find_step, step_page_context


@dataclass(frozen=True)
class StepRequest:
    """A request about one step of the course, with what answering it needs."""

    request: Request
    course: LoadedCourse
    material: CourseMaterial
    step: LoadedStep
    session: Session
    settings: Settings
    user: User | None

    def page_context(self, user: User | None = None, **names: Any) -> dict[str, Any]:
        """``step_page_context`` for this step; ``user`` (default: the signed-in one) is whose
        design and progress are shown, ``names`` as there (design, errors, extra blocks)."""
        shown = user if user is not None else self.user
        return step_page_context(
            self.request, self.session, self.settings, self.course, self.step, shown, **names
        )


def step_request(
    request: Request,
    slug: str,
    course: CourseDep,
    material: MaterialDep,
    session: SessionDep,
    settings: SettingsDep,
    user: UserDep,
) -> StepRequest:
    """The StepRequest of ``/steps/{slug}``; raises NotFound for a slug the course lacks."""
    step = find_step(course, slug)
    return StepRequest(request, course, material, step, session, settings, user)


StepDep = Annotated[StepRequest, Depends(step_request)]
