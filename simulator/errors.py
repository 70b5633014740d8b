"""The simulator's exceptions: one base class, one for bad input files."""

from __future__ import annotations

from dataclasses import dataclass


class SimulatorError(Exception):
    """Base class of every error the simulator raises on purpose."""


@dataclass(frozen=True)
class FieldError:
    """One problem in an input file: where it is and what is wrong.

    ``line`` is 1-based, or None when the file has no such line (a missing field is reported at its
    parent's line). ``field`` is a dotted path such as ``event_log.partitions``.
    """

    file: str
    line: int | None
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.field or '(file)'}: {self.message}"


class InputFileError(SimulatorError):
    """A design, scenario or pricing file is not valid; ``errors`` lists every problem found."""

    def __init__(self, errors: list[FieldError]):
        self.errors = errors
        super().__init__("\n".join(str(e) for e in errors))
