"""Fixtures of the instructor tests: a migrated database and a copy of the second course."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.orm import Session

from app.course.content import LoadedCourse
from app.course.loader import load_course
from app.db import make_engine, make_sessionmaker, upgrade
from tests.instructor.second_course import SECOND_COURSE


@pytest.fixture
def session(make_settings) -> Iterator[Session]:
    """A session on a freshly migrated test database; committed at the end of the test."""
    url = make_settings().database_url
    upgrade(url)
    engine = make_engine(url)
    with make_sessionmaker(engine)() as session:
        yield session
        session.commit()
    engine.dispose()


@pytest.fixture(scope="session")
def second_course() -> LoadedCourse:
    """The second course as loaded from tests/fixtures/second_course (read-only)."""
    return load_course(SECOND_COURSE)


@pytest.fixture
def second_course_dir(tmp_path: Path) -> Path:
    """A copy of the second course, safe to edit in a test."""
    return Path(shutil.copytree(SECOND_COURSE, tmp_path / "second_course"))
