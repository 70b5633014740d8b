"""A learner's saved design per course: YAML in the database, guarded by a version number."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from sqlalchemy.orm.exc import StaleDataError

from app.errors import Conflict
from app.models import DesignRecord
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
    return load_model(Design, record.yaml_text, "design.yaml"), record.version


def save_design(
    session: Session, user_id: int, course_id: str, design: Design, expected_version: int
) -> int:
    """Store ``design`` if the saved one is still at ``expected_version``; return the new version.

    Raises Conflict when another request saved first (the learner edited in two tabs), also when
    that request is in another app process and commits while this one writes: the write is made
    in a savepoint, so after a Conflict the caller's session is still usable (to show the form).
    """
    record = _record(session, user_id, course_id)
    current = record.version if record is not None else 0
    if current != expected_version:
        raise Conflict(
            f"Your design was saved elsewhere (version {current}, this page had "
            f"{expected_version}). Reload the page to see it."
        )
    session.flush()
    try:
        with session.begin_nested():
            if record is None:
                record = DesignRecord(
                    user_id=user_id, course_id=course_id, yaml_text=dump_yaml(design)
                )
                session.add(record)
            else:
                record.yaml_text = dump_yaml(design)
    except (StaleDataError, IntegrityError) as exc:
        raise Conflict("Your design was saved by another request; reload the page.") from exc
    return record.version
