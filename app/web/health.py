"""``/healthz``: database status, simulator version, whether the course loaded and, with
REDIS_URL, the task queue: the broker, the workers answering, jobs running and waiting (JSON)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from app.course.content import LoadedCourse
from app.db import database_status
from simulator import SIMULATOR_VERSION

router = APIRouter()


def course_status(loaded: LoadedCourse) -> str:
    """``ok`` when the course loaded without errors; ``degraded`` when it serves but a step is
    unavailable or a file has errors (the other steps work: alert on it, do not take the
    instance out); ``error`` when course.yaml does not load (no step can be served)."""
    if loaded.course is None:
        return "error"
    if loaded.errors or any(not s.available for s in loaded.steps):
        return "degraded"
    return "ok"


@router.get("/healthz", name="healthz")
def healthz(request: Request) -> JSONResponse:
    """200 with ``status: ok`` when the database answers (503 otherwise). The course's state is
    reported (``course.status``: :func:`course_status`) but does not fail the check: a broken step
    must not take the instance out, so a ``degraded`` course answers 200. Nor does
    the task queue's (``task_queue``): a lost broker would take every instance out at once, pages
    that need no simulation included; alert on its ``status`` or /metrics' designlab_broker_up."""
    database = database_status(request.app.state.engine)
    loaded: LoadedCourse = request.app.state.course_cache.get()
    body = {
        "status": "ok" if database["status"] == "ok" else "error",
        "database": database,
        "simulator_version": SIMULATOR_VERSION,
        "course": {
            "status": course_status(loaded),
            "steps": len(loaded.steps),
            "unavailable_steps": [s.slug for s in loaded.steps if not s.available],
            "errors": len(loaded.errors),
        },
    }
    watcher = request.app.state.queue_watcher
    if watcher is not None:  # reported, not failing the check: see the docstring
        body["task_queue"] = watcher.read().as_health()
    return JSONResponse(body, status_code=200 if body["status"] == "ok" else 503)
