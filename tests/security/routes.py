"""The app's routes, listed at collection time, with sample values for their path parameters."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from app.main import create_app
from tests.security.conftest import route_table, security_settings

ROUTES = route_table(create_app(security_settings(Path(tempfile.mkdtemp()))))
"""(method, path template, route name) of every route, from an app built only to list them."""

INSTRUCTOR_PREFIX = "/instructor"


def needs_instructor(path: str) -> bool:
    """Instructor pages live under /instructor; every other route is open to anyone."""
    return path == INSTRUCTOR_PREFIX or path.startswith(INSTRUCTOR_PREFIX + "/")


def concrete(path: str, samples: dict[str, str]) -> str:
    """``path`` with each ``{param}`` replaced by its sample; raises KeyError naming a parameter
    that has none (a new route needs a sample here)."""
    return re.sub(r"\{(\w+)(?::\w+)?\}", lambda m: samples[m.group(1)], path)
