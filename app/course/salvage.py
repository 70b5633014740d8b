"""What lint can still check of a step.yaml that parsed but did not validate.

Pydantic refuses a step as a whole: one unknown key in one check left the step ``None``, and with
it every other mistake of the step unreported until the first was fixed (and every known-bad entry
naming one of its checks reported as naming no check). :func:`salvage` keeps what validates:

- an unknown key (``extra_forbidden``) is deleted where it stands;
- any other error drops the innermost entry that holds it: a check, a decision, a choice, a
  figure, an ``also`` value; an error outside every entry deletes an optional top-level key, and
  a required one (``id``, ``title``, ``summary``) takes a stand-in (the folder's slug, "").

Every error is still reported, with its line, by the loader; the salvaged step only lets the lint
rules check the rest. Positions of the entries dropped are returned so that the rules' locations
map back to step.yaml's (app.course.content.LoadedStep.file_loc).
"""

from __future__ import annotations

import copy
import re
import types
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from app.course.content import folder_slug
from app.course.models import Step

Loc = tuple[str | int, ...]

_STAND_INS: dict[str, str] = {"title": "", "summary": ""}
"""Stand-ins for the step's required text fields; ``id`` stands in as the folder's slug."""


def _shape(annotation: Any) -> tuple[str, Any]:
    """("model", cls), ("list", item), ("dict", value) or ("other", None) for an annotation,
    ``X | None`` read as X."""
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        arms = [a for a in get_args(annotation) if a is not type(None)]
        return _shape(arms[0]) if len(arms) == 1 else ("other", None)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "model", annotation
    if origin is list:
        return "list", get_args(annotation)[0]
    if origin is dict:
        return "dict", get_args(annotation)[1]
    return "other", None


def _field(model: type[BaseModel], key: str) -> Any:
    """The FieldInfo of ``model`` spelled ``key`` in the file (its alias or its name), or None."""
    for name, info in model.model_fields.items():
        if key in (name, info.alias):
            return info
    return None


def _removal(data: dict[str, Any], loc: Loc, kind: str) -> Loc | None:
    """What to remove for one validation error at ``loc``: the key itself for an unknown key,
    else the innermost list or dict entry holding it, else the optional top-level key; None when
    only a stand-in can help (a required top-level field)."""
    shape: tuple[str, Any] = ("model", Step)
    node: Any = data
    entry: Loc | None = None
    for k, part in enumerate(loc):
        here = loc[: k + 1]
        if shape[0] == "model" and isinstance(node, dict) and isinstance(part, str):
            info = _field(shape[1], part)
            if info is None:
                return here if kind == "extra_forbidden" and part in node else entry
            if part not in node:
                break
            shape, node = _shape(info.annotation), node[part]
        elif shape[0] == "list" and isinstance(node, list) and isinstance(part, int):
            if not 0 <= part < len(node):
                break
            entry, shape, node = here, _shape(shape[1]), node[part]
        elif shape[0] == "dict" and isinstance(node, dict) and part in node:
            entry, shape, node = here, _shape(shape[1]), node[part]
        else:
            break
    if entry is not None:
        return entry
    top = loc[:1]
    if top and isinstance(top[0], str):
        info = _field(Step, top[0])
        if info is not None and not info.is_required() and top[0] in data:
            return top
    return None


def _delete(data: dict[str, Any], loc: Loc) -> None:
    node: Any = data
    for part in loc[:-1]:
        node = node[part]
    del node[loc[-1]]


def salvage(
    data: dict[str, Any], error: ValidationError, folder: str
) -> tuple[Step | None, dict[Loc, tuple[int, ...]]]:
    """The part of step.yaml's ``data`` that validates, given pydantic's ``error`` for all of
    it, and the list positions dropped, by list path (raw, as in the file). ``(None, {})`` when
    even that does not validate."""
    data = copy.deepcopy(data)
    removals: set[Loc] = set()
    for found in error.errors():
        loc = tuple(found["loc"])
        point = _removal(data, loc, found["type"])
        if point is not None:
            removals.add(point)
        elif loc and loc[0] == "id":
            data["id"] = re.sub(r"[^a-z0-9-]", "-", folder_slug(folder).lower())
            data["id"] = data["id"].strip("-") or "step"
        elif loc and isinstance(loc[0], str) and loc[0] in _STAND_INS:
            data[loc[0]] = _STAND_INS[loc[0]]
        else:
            return None, {}
    # An entry inside one already dropped goes with it; the rest go deepest first and, in one
    # list, from the end, so that each path still points at what it named.
    kept = [r for r in removals if not any(r[: len(o)] == o and r != o for o in removals)]
    dropped: dict[Loc, list[int]] = {}
    for loc in sorted(kept, key=lambda r: (-len(r), repr(r[:-1]), -_index(r[-1]))):
        _delete(data, loc)
        if isinstance(loc[-1], int):
            dropped.setdefault(loc[:-1], []).append(loc[-1])
    try:
        step = Step.model_validate(data)
    except ValidationError:
        return None, {}
    return step, {path: tuple(sorted(at)) for path, at in dropped.items()}


def _index(part: str | int) -> int:
    return part if isinstance(part, int) else 0


def spelled_check_ids(data: Any) -> tuple[str, ...]:
    """Every check id a step.yaml mapping spells (``checks[*].id`` that is a string), valid or
    not: a known-bad entry naming one names a check the author meant."""
    checks = data.get("checks") if isinstance(data, dict) else None
    if not isinstance(checks, list):
        return ()
    return tuple(c["id"] for c in checks if isinstance(c, dict) and isinstance(c.get("id"), str))
