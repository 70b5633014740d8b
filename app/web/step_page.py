"""Everything a step page shows, in one context builder that every step route reuses.

Routes that add to the step page (the live estimate, a simulation run) call
``step_page_context(...)`` with their extra names (``estimate=...``, ``results=...``) and render
``step.html`` with ``render(..., block="estimate")`` or ``block="results"``: htmx gets the block,
a browser without JavaScript gets the whole page with the same content filled in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from fastapi import Request
from markupsafe import Markup
from sqlalchemy.orm import Session

from app.course.content import LoadedCourse, LoadedStep
from app.course.figures import narrative_with_figures
from app.course.narrative import headings, render_markdown
from app.deps import csrf_token
from app.designs import load_design
from app.errors import NotFound
from app.models import Role, User
from app.progress import score_so_far, standings
from app.settings import Settings
from app.web.forms import build_fields
from simulator.design import Design

T = TypeVar("T")


def find_step(course: LoadedCourse, slug: str) -> LoadedStep:
    """The step with this slug; raises NotFound."""
    step = course.step(slug)
    if step is None:
        raise NotFound(f"There is no step {slug!r} in this course.")
    return step


def can_see_problems(user: User | None, settings: Settings) -> bool:
    """Instructors see why a step is unavailable; so does anyone on a development instance."""
    return (user is not None and user.role is Role.instructor) or settings.watch_steps


def _derived(course: LoadedCourse, key: str, make: Callable[[], T]) -> T:
    """``make()`` once per load of the course, kept in ``course.derived`` under ``key``."""
    if key not in course.derived:
        course.derived[key] = make()
    value: T = course.derived[key]
    return value


def narrative_html(course: LoadedCourse, step: LoadedStep) -> Markup:
    """The step's narrative as sanitised HTML, its ``{{ figures.name }}`` computed.

    It depends on the loaded course alone (figures come from the reference design), so it is
    made once per load of the folder."""
    return _derived(
        course,
        f"narrative:{step.slug}",
        lambda: render_markdown(narrative_with_figures(course, step)),
    )


def concept_titles(course: LoadedCourse, step: LoadedStep) -> dict[str, str]:
    """The step narrative's headings by anchor, for the "Read: ..." link of a check's concept
    (made once per load of the course, like the narrative)."""
    if not step.available:
        return {}
    return _derived(course, f"concepts:{step.slug}", lambda: headings(step.narrative))


def step_page_context(
    request: Request,
    session: Session,
    settings: Settings,
    course: LoadedCourse,
    step: LoadedStep,
    user: User | None,
    *,
    design: Design | None = None,
    errors: Mapping[str, str] | None = None,
    submitted: Mapping[str, str] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """The template context of ``step.html``.

    ``design`` defaults to the learner's saved design; ``errors``/``submitted`` redisplay a form
    that failed validation; ``extra`` adds names for other blocks (``estimate``, ``results``).
    """
    assert course.course is not None
    saved, version = load_design(session, user.id if user else None, course.course.id)
    shown = design if design is not None else saved
    standing = standings(session, user.id if user else None, course, saved)
    context: dict[str, Any] = {
        "course": course,
        "meta": course.course,
        "current": step,
        "standing": standing,
        "score": score_so_far(standing),
        "narrative": narrative_html(course, step) if step.available else Markup(""),
        "concepts": concept_titles(course, step),
        "fields": build_fields(step.step, shown, errors, submitted)
        if step.available and step.step is not None
        else [],
        "form_error": (errors or {}).get(""),
        "design": shown,
        "design_version": version,
        "previous_step": course.steps[step.number - 2] if step.number > 1 else None,
        "next_step": course.next_step(step),
        "show_problems": can_see_problems(user, settings),
        "csrf_token": csrf_token(request),
        "user": user,
        "saved": False,
        "conflicts": [],
        "estimate": None,
        "results": None,
        "rerun_note": "",
        "diagram": None,
        "runs_simulation": bool(step.step and step.step.scenario),
    }
    context.update(extra)
    return context
