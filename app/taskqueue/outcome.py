"""What a simulation job answers, as JSON through the result backend (no pickles cross machines)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from simulator.errors import FieldError


class JobField(BaseModel):
    """A :class:`simulator.errors.FieldError` as JSON: file, line (or None), field, message."""

    file: str
    line: int | None
    field: str
    message: str

    @classmethod
    def of(cls, error: FieldError) -> JobField:
        """The JSON form of ``error``."""
        return cls(file=error.file, line=error.line, field=error.field, message=error.message)

    def error(self) -> FieldError:
        """Back to the simulator's FieldError."""
        return FieldError(self.file, self.line, self.field, self.message)


class JobOutcome(BaseModel):
    """One job's answer.

    ``outcome``: ``ok`` (``result_json`` holds the SimulationResult's JSON), ``refused`` (over the
    size or wall-time budget: the learner's design or scenario, 422), ``bad_input`` (the
    simulator's own ValueError for its bounds, 422) or ``failed`` (the infrastructure's fault:
    nothing is counted, the learner may try again). ``run_seconds`` is the simulation's wall time
    in the worker (0 when served from the result cache), ``cached`` whether it was, ``worker`` the
    Celery host name that answered.
    """

    outcome: Literal["ok", "refused", "bad_input", "failed"]
    result_json: str | None = None
    message: str = ""
    fields: list[JobField] = []
    run_seconds: float = 0.0
    cached: bool = False
    worker: str = ""
