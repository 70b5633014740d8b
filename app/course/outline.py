"""What can still be read of a step.yaml that does not load: its id, title and scenario, the
design fields its decisions set and its checks' ids, titles and points.

A typo in one step (``minutes: [5``) makes the whole file unreadable as YAML, and a wrong type
makes it an invalid Step; either way the step is unavailable (app.course.content). But the rest
of the course still needs two facts about it: which design fields it decides (every later step
judges the learner's values there, app.course.step_design, and a learner's runs are fingerprinted
over them, app.progress) and what its checks are worth (the course's points in all). Without them
a typo in step 4 would send every later step to a re-run and drop step 4's points from the
course's total.

The file is read as a whole when its YAML parses; otherwise each top-level section (a line
starting at column 0 with ``key:``) alone, and within ``decisions`` and ``checks`` each list item
alone, so a typo spoils only the part it is in. A part that still does not parse is read line by
line for ``field:``, ``id:``, ``title:`` and ``points:`` at the item's own indentation. What
cannot be read at all is None (unknown), never a guess: ``fields`` None when a decision's fields
could not be read, ``checks`` None when a check's id or points could not. In a file that does not
parse, a missing ``decisions`` or ``checks`` section means none only when the file's ``id`` could
be read (its top level is intact); otherwise it is unknown too.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from typing import Any

from simulator.errors import InputFileError
from simulator.files import parse_yaml

_SECTION = re.compile(r"^([A-Za-z_][\w-]*)\s*:", re.MULTILINE)
_ITEM = re.compile(r"^( *)- ", re.MULTILINE)
_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_PATH = re.compile(r"^[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*$")


@dataclass(frozen=True)
class CheckOutline:
    """A check of a step that did not load: its id, title and points, and its expression when
    it could be read (None otherwise)."""

    id: str
    title: str
    points: int
    expr: str | None = None


@dataclass(frozen=True)
class StepOutline:
    """What could be read of a step.yaml that did not load (see the module docstring); every
    part is None when it could not be read."""

    id: str | None = None
    title: str | None = None
    scenario: str | None = None
    fields: frozenset[str] | None = None
    """Dotted design paths its decisions set (each decision's ``field`` and its options'
    ``also``); None when a decision could not be read."""
    checks: tuple[CheckOutline, ...] | None = None
    """Its checks in file order; None when a check's id or points could not be read."""

    @property
    def max_points(self) -> int | None:
        """The checks' points in all; None when the checks could not be read."""
        return sum(c.points for c in self.checks) if self.checks is not None else None


def _parse(text: str) -> Any:
    """The YAML of ``text`` (the course's own reader: YAML 1.2, limits), or None when it does
    not parse."""
    try:
        return parse_yaml(text, "step.yaml")[0]
    except InputFileError:
        return None


def _sections(text: str) -> dict[str, str]:
    """Each top-level key's part of ``text`` (from its line to the next top-level key)."""
    found = list(_SECTION.finditer(text))
    ends = [m.start() for m in found[1:]] + [len(text)]
    return {m.group(1): text[m.start() : end] for m, end in zip(found, ends, strict=False)}


def _items(section: str) -> list[str]:
    """The list items of a section (``decisions:`` or ``checks:``), each dedented to column 0;
    items are the ``- `` lines at the first item's indentation."""
    first = _ITEM.search(section)
    if first is None:
        return []
    indent = first.group(1)
    starts = [m.start() for m in _ITEM.finditer(section) if m.group(1) == indent]
    ends = [*starts[1:], len(section)]
    return [textwrap.dedent(section[s:e]) for s, e in zip(starts, ends, strict=True)]


def _scalar(item: str, key: str) -> str | None:
    """The plain or quoted value of ``key`` at an item's own level (``- key:`` or two spaces in),
    read line by line; None when absent or not a one-line value."""
    value = r"(?:\"([^\"]*)\"|'([^']*)'|([^#\n]*?))"
    pattern = rf"^(?:- |  ){re.escape(key)}:[ \t]*{value}[ \t]*(?:#.*)?$"
    match = re.search(pattern, item, re.MULTILINE)
    if match is None:
        return None
    value = next(g for g in match.groups() if g is not None)
    return value or None


def _item_data(item: str) -> dict[str, Any] | None:
    """A dedented list item as a mapping, when its YAML parses."""
    data = _parse(item)
    if isinstance(data, list) and len(data) == 1 and isinstance(data[0], dict):
        return data[0]
    return None


def _decision_fields(item: str) -> set[str] | None:
    data = _item_data(item)
    if data is None:
        field = _scalar(item, "field")
        # An option's ``also`` sets more fields, which a line scan cannot pair up reliably.
        if field is None or not _PATH.match(field) or re.search(r"^\s+also:", item, re.M):
            return None
        return {field}
    return _fields_of(data)


def _fields_of(decision: Any) -> set[str] | None:
    if not isinstance(decision, dict) or not isinstance(decision.get("field"), str):
        return None
    out = {decision["field"]}
    for choice in decision.get("choices") or []:
        also = choice.get("also") if isinstance(choice, dict) else None
        if isinstance(also, dict):
            out |= {str(k) for k in also}
    return out


def _check_of(check: Any) -> CheckOutline | None:
    if not isinstance(check, dict):
        return None
    ident, points, title = check.get("id"), check.get("points"), check.get("title")
    if not isinstance(ident, str) or not _ID.match(ident):
        return None
    if isinstance(points, bool) or not isinstance(points, int) or points < 0:
        return None
    expr = check.get("expr")
    title = title if isinstance(title, str) else ident
    return CheckOutline(ident, title, points, expr if isinstance(expr, str) else None)


def _check_from_item(item: str) -> CheckOutline | None:
    data = _item_data(item)
    if data is not None:
        return _check_of(data)
    points = _scalar(item, "points")
    fields = {key: _scalar(item, key) for key in ("id", "title", "expr")}
    return _check_of({**fields, "points": int(points) if points and points.isdigit() else None})


def _from_lists(decisions: Any, checks: Any) -> tuple[frozenset[str] | None, tuple | None]:
    fields: set[str] | None = set()
    for decision in decisions if isinstance(decisions, list) else []:
        found = _fields_of(decision)
        fields = None if found is None or fields is None else fields | found
    outlines = [_check_of(c) for c in checks] if isinstance(checks, list) else []
    known = None if any(c is None for c in outlines) else tuple(c for c in outlines if c)
    return (frozenset(fields) if fields is not None else None), known


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def read_outline(text: str) -> StepOutline:
    """The StepOutline of a step.yaml's ``text`` (see the module docstring)."""
    whole = _parse(text)
    if isinstance(whole, dict):
        fields, checks = _from_lists(whole.get("decisions"), whole.get("checks"))
        return StepOutline(
            _text(whole.get("id")), _text(whole.get("title")), _text(whole.get("scenario")),
            fields, checks,
        )  # fmt: skip
    sections = _sections(text)
    values: dict[str, Any] = {}
    for key in ("id", "title", "scenario"):
        part = _parse(sections.get(key, ""))
        values[key] = _text(part.get(key)) if isinstance(part, dict) else None
    ident = values["id"] if values["id"] and _ID.match(values["id"]) else None
    # A section that is missing means none (a step without checks) only when the file's top
    # level is readable at all (its id is); otherwise nothing can be told.
    missing = () if ident else None
    return StepOutline(
        ident,
        values["title"],
        values["scenario"],
        _section_fields(sections.get("decisions"), missing),
        _section_checks(sections.get("checks"), missing),
    )


def _section_fields(section: str | None, missing: tuple[()] | None) -> frozenset[str] | None:
    if section is None:
        return None if missing is None else frozenset()
    data = _parse(section)
    if isinstance(data, dict):
        return _from_lists(data.get("decisions"), [])[0]
    fields: set[str] = set()
    for item in _items(section):
        found = _decision_fields(item)
        if found is None:
            return None
        fields |= found
    return frozenset(fields)


def _section_checks(
    section: str | None, missing: tuple[()] | None
) -> tuple[CheckOutline, ...] | None:
    if section is None:
        return missing
    data = _parse(section)
    if isinstance(data, dict):
        return _from_lists([], data.get("checks"))[1]
    checks = [_check_from_item(item) for item in _items(section)]
    return None if any(c is None for c in checks) else tuple(c for c in checks if c)
