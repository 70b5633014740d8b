"""Shared fixtures for the course tests: the real course folder, loaded once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.course.content import LoadedCourse
from app.course.loader import load_course

STEPS_DIR = Path(__file__).resolve().parents[2] / "steps"


@pytest.fixture(scope="session")
def course() -> LoadedCourse:
    """steps/ as the app loads it."""
    return load_course(STEPS_DIR)
