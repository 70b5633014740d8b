"""Render a grade result in one of the three formats and write it whole or not at all."""

from __future__ import annotations

import os
import re
import sys
import tempfile
from enum import StrEnum
from pathlib import Path

from app.grading.junit import to_junit
from app.grading.result import GradeResult
from app.grading.text import to_text


class ReportFormat(StrEnum):
    """Output formats of ``designlab grade``."""

    text = "text"
    json = "json"
    junit = "junit"


def render(result: GradeResult, report_format: ReportFormat) -> str:
    """The result as text, JSON (contract 3, indented, ending in a newline) or JUnit XML."""
    if report_format is ReportFormat.json:
        return to_json(result)
    if report_format is ReportFormat.junit:
        return to_junit(result)
    return to_text(result)


def to_json(result: GradeResult) -> str:
    """The result's JSON as the API returns it, indented by 2, with a final newline. JSON
    escapes U+0000 to U+001F itself; DEL and the C1 controls (U+007F to U+009F), which JSON may
    carry raw, are written as ``\\u007f`` escapes too, so no control character reaches a
    terminal or a log (the parsed value is the same)."""
    return _C1_OR_DEL.sub(_json_escape, result.model_dump_json(indent=2)) + "\n"


_C1_OR_DEL = re.compile("[\x7f-\x9f]")


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def _umask() -> int:
    """The process's umask (read by setting it, then put back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename.

    A reader never sees half a report: either the old file or the whole new one. Raises OSError
    when the folder does not exist or cannot be written.
    """
    folder = path.parent if str(path.parent) else Path(".")
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        # mkstemp makes the file private (0600); a report is read by whoever publishes it (a CI
        # step running as another user), so it gets the mode a plain open() would: 0666 - umask.
        os.fchmod(handle, 0o666 & ~_umask())
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def emit(text: str, out: Path | None) -> None:
    """Write the report to ``out`` atomically, or to standard output when ``out`` is None."""
    if out is None:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        write_atomically(out, text)
