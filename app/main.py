"""The FastAPI application factory: ``create_app(settings)``; uvicorn runs it with --factory."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI
from fastapi.staticfiles import StaticFiles
from starlette.middleware.sessions import SessionMiddleware

from app import metrics, middleware, simpool
from app.api.router import router as api_router
from app.course.loader import CourseCache
from app.db import make_engine, make_sessionmaker, upgrade
from app.development_secret import development_secret_key
from app.settings import DEVELOPMENT_SECRET_KEY_FILE, Settings, get_settings
from app.sim_backend import backend_for, watch
from app.web import (
    api_docs,
    auth,
    errors,
    estimate,
    health,
    instructor,
    pages,
    report,
    signup,
    simulation,
)
from app.web.form_text import refuse_control_characters
from app.web.templating import STATIC_DIR, make_templates
from simulator import SIMULATOR_VERSION

_FROZEN = False


def freeze_startup_objects() -> None:
    """Once per process, after the first start: collect, then move every object alive (modules,
    the course, templates, models) out of the garbage collector's reach (``gc.freeze``).

    They live as long as the process, and the collector otherwise walks them again and again:
    on a cached simulation run its pauses were most of the 95th percentile (46 ms -> 21 ms).
    """
    global _FROZEN
    if not _FROZEN:
        _FROZEN = True
        gc.collect()
        gc.freeze()


def session_secret_key(settings: Settings) -> str:
    """SECRET_KEY, or in development without one, the random key kept in var/secret_key
    (made on the first start). Settings already refuse a missing key outside development."""
    return settings.secret_key or development_secret_key(DEVELOPMENT_SECRET_KEY_FILE)


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the app: migrate the database on start-up, load the course, mount the routes.

    ``app.state`` holds ``settings``, ``engine``, ``sessionmaker``, ``course_cache`` and
    ``templates`` for the dependencies in app/deps.py, and ``queue_watcher`` (the task
    queue's status for /healthz, None without REDIS_URL).
    """
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        upgrade(settings.database_url)
        pool = simpool.configure(simpool.limits_from(settings), backend_for(settings))
        if settings.sim_warm_pool and isinstance(pool, simpool.SimulationPool):
            pool.warm()
        app.state.queue_watcher = watch(settings, pool)
        app.state.course_cache.get()
        freeze_startup_objects()
        yield
        simpool.shutdown()
        if app.state.queue_watcher is not None:
            app.state.queue_watcher.close()
        app.state.engine.dispose()

    app = FastAPI(
        title="designlab",
        version=SIMULATOR_VERSION,
        debug=settings.debug,
        lifespan=lifespan,
        docs_url=None,  # app.web.api_docs serves /api/docs with its assets from this site
        openapi_url="/api/openapi.json",
        redoc_url=None,
        max_body_size=settings.max_body_bytes,
        dependencies=[Depends(refuse_control_characters)],
    )
    app.state.settings = settings
    app.state.engine = make_engine(settings.database_url)
    app.state.sessionmaker = make_sessionmaker(app.state.engine)
    app.state.course_cache = CourseCache(settings.steps_dir, watch=settings.watch_steps)
    app.state.templates = make_templates(settings)
    app.state.queue_watcher = None

    middleware.install(app, settings)  # before the session middleware: rate limits sit inside it
    app.add_middleware(
        SessionMiddleware,
        secret_key=session_secret_key(settings),
        session_cookie="designlab_session",
        max_age=settings.session_max_age_hours * 3600,
        same_site="lax",
        https_only=settings.env == "production",
    )
    errors.install(app)
    app.mount("/static", StaticFiles(directory=STATIC_DIR, check_dir=False), name="static")
    app.include_router(health.router)
    app.include_router(metrics.router)
    app.include_router(api_router)
    api_docs.install(app)
    app.include_router(auth.router)
    app.include_router(pages.router)
    app.include_router(estimate.router)
    app.include_router(simulation.router)
    app.include_router(report.router)
    app.include_router(signup.router)
    instructor.install(app)
    return app
