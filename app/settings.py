"""designlab's configuration: one settings object read from the environment (or a .env file)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DEVELOPMENT_SECRET_KEY_FILE = Path("var/secret_key")
"""Where development keeps the random session key it makes when SECRET_KEY is unset (relative
to the working directory, beside the default SQLite file)."""

DEFAULT_DATABASE_URL = "sqlite:///var/designlab.sqlite3"
COURSE_DIR = Path(__file__).resolve().parents[1] / "steps"
"""The course that comes with this installation (the repository's steps/)."""


class Settings(BaseSettings):
    """Every setting designlab reads. Environment variables use the field name in upper case."""

    model_config = SettingsConfigDict(
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
    )
    # Each field's docstring below documents it (tests/app/test_settings.py checks there is
    # one). pydantic's use_attribute_docstrings would read this file's source and parse it on
    # every start to copy them into the fields' descriptions: 31 ms of each command, and
    # nothing reads those descriptions.

    env: Literal["development", "test", "production"] = "development"
    """ENV: where this instance runs. Outside development a real SECRET_KEY is required."""

    debug: bool = False
    """DEBUG: tracebacks on error pages; steps/ reloads on the next request after a change."""

    database_url: str = DEFAULT_DATABASE_URL
    """DATABASE_URL: SQLAlchemy URL. Default: a SQLite file under var/ (relative to the working
    directory). For PostgreSQL use ``postgresql+psycopg://user:password@host:5432/designlab``."""

    secret_key: str | None = Field(None, min_length=16)
    """SECRET_KEY: signs session cookies (at least 16 characters). Required outside development;
    in development, when unset, a random key is made once into var/secret_key (mode 0600) and
    reused on every start (app.development_secret)."""

    session_idle_minutes: int = Field(72 * 60, ge=1)
    """SESSION_IDLE_MINUTES: an account's session unused for this long is ended (the next
    request is signed out). Default three days. Guests have no idle limit: their session is
    their only key to their work."""

    session_max_age_hours: int = Field(14 * 24, ge=1)
    """SESSION_MAX_AGE_HOURS: an account's session ends this long after signing in, however
    active. Default 14 days. Also the cookie's lifetime from the latest visit, which is all that
    bounds a guest's session."""

    forwarded_allow_ips: str = "127.0.0.1"
    """FORWARDED_ALLOW_IPS: comma-separated addresses or networks (``172.30.0.0/24``) of the
    proxies whose ``X-Forwarded-For`` and ``X-Forwarded-Proto`` are believed; a request from any
    other peer is counted under its own address. ``*`` trusts every peer: only for a server that
    nothing but the proxy can reach."""

    steps_dir: Path = COURSE_DIR
    """STEPS_DIR: the course folder (course.yaml, one folder per step, scenarios/, designs/).
    Default: the steps/ folder of this installation, whatever the working directory, so that
    ``designlab grade design.yaml`` works where the learner saved the file."""

    max_body_bytes: int = Field(2_000_000, ge=1024)
    """MAX_BODY_BYTES: the largest request body accepted; a larger one gets 413. A design or
    scenario file may be 1 MB (simulator.files.MAX_FILE_BYTES) plus the form's overhead."""

    sim_workers: int = Field(0, ge=0)
    """SIM_WORKERS: processes that run simulations; 0 (the default) means CPU cores less one, at
    least one."""

    sim_warm_pool: bool = False
    """SIM_WARM_POOL: start the simulation workers when the app starts, with the simulator
    already imported, so a learner's first run waits for no process start and no imports.
    ``designlab serve`` turns it on; the tests leave it off (each test app would start
    processes)."""

    sim_timeout_seconds: float = Field(30.0, gt=0)
    """SIM_TIMEOUT_SECONDS: wall-time budget of one simulation; its worker is killed after it."""

    sim_max_step_events: int = Field(2_000_000, ge=1)
    """SIM_MAX_STEP_EVENTS: a scenario expected to offer more step events is refused up front."""

    rate_limit_sign_in: str = "10/minute"
    """RATE_LIMIT_SIGN_IN: sign-in attempts per client address (``limits`` notation, e.g.
    ``10/minute``). Counted in Redis when REDIS_URL is set (shared by every instance), else in
    each app process (N instances then allow N times as many)."""

    rate_limit_grade: str = "20/minute"
    """RATE_LIMIT_GRADE: gradings per learner (or per client address for the API)."""

    rate_limit_simulate: str = "60/minute"
    """RATE_LIMIT_SIMULATE: simulation runs per learner (or per client address for the API)."""

    redis_url: str | None = None
    """REDIS_URL: a Redis server shared by every instance, e.g. ``redis://127.0.0.1:6379/0``.
    Unset (the default): simulations run in this process's pool and rate limits are counted in
    its memory. Set: simulations and gradings go through the task queue to ``designlab worker``
    processes on any machine, and rate limits are counted in Redis (docs/scale-out.md)."""

    task_wait_seconds: float = Field(120.0, gt=0)
    """TASK_WAIT_SECONDS: with REDIS_URL, the longest a request waits for its queued simulation,
    queue and run together; the job expires then (no worker starts it later)."""

    task_visibility_timeout_seconds: float = Field(0.0, ge=0)
    """TASK_VISIBILITY_TIMEOUT_SECONDS: with REDIS_URL, a job taken by a worker that has not
    acknowledged it after this long is handed to another worker (the first one died). 0 (the
    default) means SIM_TIMEOUT_SECONDS plus 30 s; it must exceed the longest run."""

    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    """LOG_LEVEL: the least severe level logged. Logs are JSON lines on stderr with a request id."""

    @model_validator(mode="after")
    def _require_secret_outside_development(self) -> Settings:
        if self.env != "development" and self.secret_key is None:
            raise ValueError(
                f"SECRET_KEY is not set; set a random value (at least 16 characters) when "
                f"ENV={self.env}"
            )
        return self

    @property
    def watch_steps(self) -> bool:
        """Reload steps/ when its files change: in development or with DEBUG on."""
        return self.debug or self.env == "development"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once from the environment."""
    return Settings()
