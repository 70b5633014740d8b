"""designlab's configuration: one settings object read from the environment (or a .env file)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_SECRET_KEY = "designlab-development-secret-change-me"
"""The shipped secret: good enough on a laptop, refused anywhere else."""

DEFAULT_DATABASE_URL = "sqlite:///var/designlab.sqlite3"


class Settings(BaseSettings):
    """Every setting designlab reads. Environment variables use the field name in upper case."""

    model_config = SettingsConfigDict(
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        use_attribute_docstrings=True,
    )

    env: Literal["development", "test", "production"] = "development"
    """ENV: where this instance runs. Outside development a real SECRET_KEY is required."""

    debug: bool = False
    """DEBUG: tracebacks on error pages; steps/ reloads on the next request after a change."""

    database_url: str = DEFAULT_DATABASE_URL
    """DATABASE_URL: SQLAlchemy URL. Default: a SQLite file under var/ (relative to the working
    directory). For PostgreSQL use ``postgresql+psycopg://user:password@host:5432/designlab``."""

    secret_key: str = DEFAULT_SECRET_KEY
    """SECRET_KEY: signs session cookies. Refused when left at the default outside development."""

    steps_dir: Path = Path("steps")
    """STEPS_DIR: the course folder (course.yaml, one folder per step, scenarios/, designs/)."""

    @model_validator(mode="after")
    def _refuse_default_secret(self) -> Settings:
        if self.env != "development" and self.secret_key == DEFAULT_SECRET_KEY:
            raise ValueError(
                f"SECRET_KEY is the shipped default; set a random value when ENV={self.env}"
            )
        return self

    @property
    def watch_steps(self) -> bool:
        """Reload steps/ when its files change: in development or with DEBUG on."""
        return self.debug or self.env == "development"

    @property
    def is_sqlite(self) -> bool:
        """True when DATABASE_URL points at a SQLite database."""
        return self.database_url.startswith("sqlite")


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once from the environment."""
    return Settings()
