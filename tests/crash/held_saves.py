"""The app for the crash test, with saves that can be held in flight: ``uvicorn
tests.crash.held_saves:create_app --factory``.

With ``DESIGNLAB_TEST_HOLD_SAVES`` naming a folder (read here only, at start-up), a transaction
that updated a learner's design stops just before its COMMIT while the file ``armed`` is in that
folder: it writes a ``held-*`` file there and waits (for ``release``, or for the SIGKILL the
test sends). The UPDATE has reached the database, the COMMIT has not, so the test kills the
server with saves truly in flight, whatever the machine's load.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from sqlalchemy import Engine, event

from app.main import create_app as create_designlab_app

HOLD_ENV = "DESIGNLAB_TEST_HOLD_SAVES"
ARMED = "armed"
RELEASE = "release"
HELD_PREFIX = "held-"
DESIGN_UPDATE = "design_update_pending"


def install_hold(folder: Path) -> None:
    """Hold every COMMIT of a transaction that updated the ``designs`` table while
    ``folder/armed`` exists (see the module docstring)."""

    def after_cursor_execute(conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if statement.lstrip().upper().startswith("UPDATE DESIGNS"):
            conn.info[DESIGN_UPDATE] = True

    def commit(conn: Any) -> None:
        if not conn.info.pop(DESIGN_UPDATE, False) or not (folder / ARMED).exists():
            return
        marker = folder / f"{HELD_PREFIX}{os.getpid()}-{threading.get_ident()}-{uuid.uuid4().hex}"
        marker.write_text("an UPDATE of designs waits here for its COMMIT\n")
        while not (folder / RELEASE).exists():
            time.sleep(0.05)

    def rollback(conn: Any) -> None:
        conn.info.pop(DESIGN_UPDATE, None)

    event.listen(Engine, "after_cursor_execute", after_cursor_execute)
    event.listen(Engine, "commit", commit)
    event.listen(Engine, "rollback", rollback)


def create_app() -> FastAPI:
    """designlab's app, with the hold installed when DESIGNLAB_TEST_HOLD_SAVES is set."""
    folder = os.environ.get(HOLD_ENV)
    if folder:
        install_hold(Path(folder))
    return create_designlab_app()
