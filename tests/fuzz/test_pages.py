"""Any design the rules accept, however extreme (a group of no instances, 4096 partitions, the
largest retry counts), renders every page without a server error: the step pages with their
live estimate and architecture diagram, the overview, and a run of a step.

Hypothesis draws designs by pushing a few fields of the reference design to their bounds or to
another allowed choice; designs the model refuses are skipped. Two explicit examples give groups
no capacity (utilisation without bound: it once crashed the diagram's percentage). A learner
account holds each drawn design (saved as the form would) and asks for the pages.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from sqlalchemy import select

from app.accounts import create_user
from app.course.design_fields import UnknownField, design_field, with_values
from app.course.loader import load_course
from app.db import session_scope
from app.designs import load_design, save_design
from app.main import create_app
from app.models import Role, User
from app.settings import Settings
from simulator.design import Design
from simulator.files import load_design as read_design
from tests.web.html import csrf_of, soup

REPO = Path(__file__).resolve().parents[2]
REFERENCE = read_design(REPO / "steps" / "designs" / "reference.yaml")
SLUGS = [step.slug for step in load_course(REPO / "steps").steps]
COURSE_ID = load_course(REPO / "steps").course.id  # type: ignore[union-attr]


def leaf_paths(data: dict[str, Any], prefix: str = "") -> list[str]:
    paths = []
    for key, value in data.items():
        path = f"{prefix}{key}"
        paths.extend(leaf_paths(value, path + ".") if isinstance(value, dict) else [path])
    return paths


def extremes(path: str) -> list[Any]:
    """The values worth trying for a field: its bounds (and 0 and 1 inside them), its choices,
    both booleans."""
    try:
        spec = design_field(path)
    except UnknownField:
        return []
    if spec.choices is not None:
        return list(spec.choices)
    if spec.kind == "bool":
        return [True, False]
    if spec.kind in ("int", "float"):
        low, high = spec.minimum, spec.maximum
        found = [v for v in (low, high, 0, 1) if v is not None]
        inside = [v for v in found if (low is None or v >= low) and (high is None or v <= high)]
        return [int(v) if spec.kind == "int" else float(v) for v in inside]
    return []


FIELDS = {p: extremes(p) for p in leaf_paths(REFERENCE.model_dump(mode="json"))}
FIELDS = {p: values for p, values in FIELDS.items() if values}
CHANGES = st.dictionaries(
    st.sampled_from(sorted(FIELDS)), st.integers(0, 10), min_size=1, max_size=4
).map(lambda picks: {p: FIELDS[p][i % len(FIELDS[p])] for p, i in picks.items()})


@pytest.fixture(scope="module")
def learner(tmp_path_factory):
    """A signed-in learner's client and the app (rate limits lifted)."""
    root = tmp_path_factory.mktemp("pages")
    app = create_app(
        Settings(
            _env_file=None,
            env="test",
            secret_key="pages-fuzz-secret-key-0123",
            database_url=f"sqlite:///{root / 'pages.sqlite3'}",
            steps_dir=REPO / "steps",
            rate_limit_simulate="100000/minute",
            rate_limit_grade="100000/minute",
            sim_timeout_seconds=20,
        )
    )
    with TestClient(app) as client:
        for session in session_scope(app.state.sessionmaker):
            create_user(session, "fuzz@example.com", Role.learner, "a long password")
        token = csrf_of(soup(client.get("/login")))
        signed_in = client.post(
            "/login",
            data={"csrf_token": token, "email": "fuzz@example.com", "password": "a long password"},
            follow_redirects=False,
        )
        assert signed_in.status_code == 303
        yield client, app


def hold(app, design: Design) -> None:
    """Save ``design`` as the learner's, at whatever version is stored."""
    for session in session_scope(app.state.sessionmaker):
        user = session.scalar(select(User).where(User.email == "fuzz@example.com"))
        _, version = load_design(session, user.id, COURSE_ID)
        save_design(session, user.id, COURSE_ID, design, version)


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(changes=CHANGES, step=st.sampled_from(SLUGS))
@example(changes={"consumers.state.instances": 0}, step="agents-tools-model")
@example(changes={"tools.runners": 0, "consumers.agent.instances": 0}, step="evening-peak")
def test_an_extreme_but_valid_design_renders_every_page(learner, changes, step):
    client, app = learner
    try:
        design = with_values(REFERENCE, changes)
    except (ValidationError, ValueError):
        assume(False)
    hold(app, design)
    for path in ["/", *(f"/steps/{slug}" for slug in SLUGS)]:
        response = client.get(path)
        assert response.status_code < 500, f"{path} with {changes}: {response.status_code}"
    page = soup(client.get(f"/steps/{step}"))
    form = {"csrf_token": csrf_of(page), "design_version": page.select_one(
        "input[name=design_version]")["value"]}  # fmt: skip
    ran = client.post(f"/steps/{step}/run", data=form, headers={"HX-Request": "true"})
    assert ran.status_code < 500, f"run {step} with {changes}: {ran.status_code}"
