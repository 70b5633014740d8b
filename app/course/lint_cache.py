"""The lint rules' findings for a course folder, kept on disk for the next command-line grade.

Running the rules is most of what loading a course costs (parsing every explanation template,
walking every check's expression): about a quarter of a second of a ``designlab grade`` that
then simulates for one to two. Their answer is a function of the course's files and of
designlab's own code, so a grade keeps it in a file named by a SHA-256 of both and reads it back
the next time, as Jinja keeps the explanations' compiled code (app.checks.explanations): in the
same private per-user directory under the temporary directory, failing quietly (a cache that
cannot be read or written costs only the rules' run).

What the key covers:

- the folder as named (the findings carry its path), and every file under it: its path
  relative to the folder and its bytes;
- designlab's code: path, size and modification time (ns) of every ``.py`` and compiled module
  of the ``app`` and ``simulator`` packages, as Python's own ``.pyc`` check does;
- Python's, Jinja's and pydantic's versions (template syntax errors and validation messages are
  theirs).

A run in which a rule raised is not kept (its error may not be the course's). ``designlab lint``
and the web app never read this cache: an instructor's lint always runs every rule.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

import jinja2
import pydantic

import app
import simulator
from app.checks.explanations import cache_directory
from app.course.content import LoadedCourse, Problem
from app.course.lint import checked_rules

FILE_PATTERN = "designlab-lint-{}.json"
"""The cache file's name; ``{}`` is the key's hex digest."""


def cached_rules(course: LoadedCourse) -> list[Problem]:
    """Every problem the lint rules find in ``course`` (app.course.lint.run_rules), read from
    the cache when the same course and code ran them before, else run and stored. Never raises
    for the cache: an unreadable, unwritable or damaged file costs only the rules' run."""
    directory = cache_directory()
    if directory is None:
        return checked_rules(course)[0]
    path = directory / FILE_PATTERN.format(lint_key(course.root))
    found = _read(path)
    if found is not None:
        return found
    found, completed = checked_rules(course)
    if completed:
        _write(path, found)
    return found


def lint_key(root: Path) -> str:
    """The hex SHA-256 that names the rules' findings for the course folder ``root``: the
    folder's name, its files' paths and bytes, designlab's code and the libraries' versions
    (module docstring). Unreadable files count by name alone (the rules report them)."""
    digest = hashlib.sha256()
    versions = (sys.version, jinja2.__version__, pydantic.VERSION, str(root))
    digest.update(repr(versions).encode())
    for package in (app, simulator):
        folder = Path(str(package.__file__)).parent
        for code in sorted(_code_files(folder)):
            with contextlib.suppress(OSError):
                stat = code.stat()
                digest.update(f"\0{code}\0{stat.st_size}\0{stat.st_mtime_ns}".encode())
    for file in sorted(_course_files(root)):
        digest.update(b"\0" + str(file.relative_to(root)).encode() + b"\0")
        with contextlib.suppress(OSError):
            digest.update(hashlib.sha256(file.read_bytes()).digest())
    return digest.hexdigest()


def _code_files(folder: Path) -> list[Path]:
    """The package's modules: every ``.py`` and compiled extension under ``folder``."""
    found: list[Path] = []
    for where, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        found += [Path(where, f) for f in files if f.endswith((".py", ".so", ".pyd"))]
    return found


def _course_files(root: Path) -> list[Path]:
    """Every file under the course folder ``root``, hidden ones and caches left out."""
    found: list[Path] = []
    for where, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"]
        found += [Path(where, f) for f in files if not f.startswith(".")]
    return found


def _read(path: Path) -> list[Problem] | None:
    """The findings stored at ``path``, or None when there are none readable there."""
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
        return [Problem(**row) for row in rows]
    except (OSError, ValueError, TypeError):
        return None


def _write(path: Path, found: list[Problem]) -> None:
    """Store ``found`` at ``path`` (written beside it, then renamed: a reader never sees half)."""
    rows = [
        {
            "severity": p.severity,
            "file": p.file,
            "line": p.line,
            "field": p.field,
            "message": p.message,
            "step": p.step,
        }
        for p in found
    ]
    with contextlib.suppress(OSError):
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(rows, out)
            os.replace(temp, path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temp)
