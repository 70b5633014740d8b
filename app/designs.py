"""A learner's saved design per course: YAML in the database, guarded by a version number."""

from __future__ import annotations

from functools import lru_cache

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from app.db import insert_unless_exists
from app.errors import Conflict
from app.models import DesignRecord, utcnow
from simulator.design import Design
from simulator.files import dump_yaml, load_model


def _record(session: Session, user_id: int, course_id: str) -> DesignRecord | None:
    return session.scalar(
        select(DesignRecord).where(
            DesignRecord.user_id == user_id, DesignRecord.course_id == course_id
        )
    )


def load_design(session: Session, user_id: int | None, course_id: str) -> tuple[Design, int]:
    """The learner's design and its version; a fresh default Design with version 0 if none.

    Raises InputFileError if the stored YAML no longer validates (a contract change).
    """
    record = _record(session, user_id, course_id) if user_id is not None else None
    if record is None:
        return Design(), 0
    return parse_design(record.yaml_text), record.version


def parse_design(yaml_text: str) -> Design:
    """A stored design's YAML as a Design of the caller's own (parsed once per distinct text).

    Raises InputFileError if the YAML no longer validates (a contract change)."""
    return _parsed(yaml_text).model_copy(deep=True)


@lru_cache(maxsize=1024)
def _parsed(yaml_text: str) -> Design:
    """A stored design's YAML, parsed and validated once per process for each distinct text
    (YAML parsing takes about 1.5 ms, a deep copy 0.1 ms; every step page reads the design).
    Callers get copies, so the cached model is never changed."""
    return load_model(Design, yaml_text, "design.yaml")


def save_design(
    session: Session, user_id: int, course_id: str, design: Design, expected_version: int
) -> int:
    """Store ``design`` if the saved one is still at ``expected_version``; return the new version.

    Raises Conflict when another request saved first (the learner edited in two tabs), also when
    that request is in another app process and commits while this one writes. The write is one
    statement in the caller's transaction (an UPDATE guarded by ``WHERE version = expected``, or
    an INSERT that yields to an existing row), so it commits with the caller's other changes and
    after a Conflict the session is still usable (to show the form).
    """
    record = _record(session, user_id, course_id)
    current = record.version if record is not None else 0
    if current != expected_version:
        raise Conflict(
            f"Your design was saved elsewhere (version {current}, this page had "
            f"{expected_version}). Reload the page to see it."
        )
    yaml_text = dump_yaml(design)
    if record is None:
        written = insert_unless_exists(
            session, DesignRecord, user_id=user_id, course_id=course_id, yaml_text=yaml_text,
            version=1,
        )  # fmt: skip
    else:
        guarded = (
            update(DesignRecord)
            .where(DesignRecord.id == record.id, DesignRecord.version == expected_version)
            .values(yaml_text=yaml_text, version=expected_version + 1, updated_at=utcnow())
            .execution_options(synchronize_session="fetch")
        )
        written = session.execute(guarded).rowcount == 1  # type: ignore[attr-defined]
    if not written:
        raise Conflict("Your design was saved by another request; reload the page.")
    return expected_version + 1
