"""Dotted paths into the Design model (``event_log.partitions``): resolve, read and set them.

A step's decisions name design fields by path; this module tells what kind of value a path holds
(its type, allowed choices, bounds) so that lint can check the path and the form can be built.
"""

from __future__ import annotations

import math
import types
from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal, Union, get_args, get_origin

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from simulator.design import Design

Kind = Literal["bool", "int", "float", "str", "choice"]


class UnknownField(KeyError):
    """A dotted path that names no field of the Design model."""

    def __init__(self, path: str, reason: str):
        self.path = path
        super().__init__(f"{path}: {reason}")

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class DesignField:
    """One leaf field of the design: its path, type, whether null is allowed, and its metadata."""

    path: str
    annotation: Any
    optional: bool
    info: FieldInfo

    @property
    def kind(self) -> Kind:
        """bool, int, float, str, or choice (an enum or a Literal)."""
        if self.choices is not None:
            return "choice"
        if self.annotation is bool:
            return "bool"
        if self.annotation is int:
            return "int"
        if self.annotation is float:
            return "float"
        return "str"

    @property
    def choices(self) -> list[Any] | None:
        """The allowed values of an enum or Literal field (enum members as their values)."""
        if isinstance(self.annotation, type) and issubclass(self.annotation, Enum):
            return [member.value for member in self.annotation]
        if get_origin(self.annotation) is Literal:
            return list(get_args(self.annotation))
        return None

    def _bound(self, *names: str) -> float | None:
        for item in self.info.metadata:
            for name in names:
                if isinstance(item, annotated_types.BaseMetadata) and hasattr(item, name):
                    return float(getattr(item, name))
        return None

    @property
    def minimum(self) -> float | None:
        """The lower bound (ge or gt) of a number field, or None."""
        return self._bound("ge", "gt")

    @property
    def minimum_exclusive(self) -> bool:
        """True when the lower bound is exclusive (gt): the minimum itself is refused."""
        return self._bound("ge") is None and self._bound("gt") is not None

    @property
    def maximum(self) -> float | None:
        """The upper bound (le or lt) of a number field, or None."""
        return self._bound("le", "lt")

    def coerce(self, raw: str) -> Any:
        """Turn a form string into this field's value; '' is None for an optional field.

        Raises ValueError when ``raw`` is not one of the choices or not a number.
        """
        text = raw.strip()
        if text == "" and self.optional:
            return None
        kind = self.kind
        if kind == "choice":
            for choice in self.choices or []:
                if str(choice) == text:
                    return choice
            raise ValueError(f"{text!r} is not one of {', '.join(map(str, self.choices or []))}")
        if kind == "bool":
            return text.lower() in {"1", "true", "on", "yes"}
        if kind in ("int", "float"):
            number = _number(text, whole=kind == "int")
            return int(number) if kind == "int" and number.is_integer() else number
        return text


def _number(text: str, whole: bool) -> float:
    """``text`` as a finite number; raises ValueError with a message for the learner."""
    wanted = "a whole number" if whole else "a number"
    try:
        number = float(text)
    except ValueError:
        if not text.strip():
            # Also what a browser sends for letters typed into a number field.
            raise ValueError(f"Enter {wanted}: the field is empty.") from None
        raise ValueError(f"Enter {wanted} (digits only, no separators); got {text!r}.") from None
    if not math.isfinite(number):
        raise ValueError(f"Enter {wanted}; {text!r} is not a finite value.")
    return number


def _strip_optional(annotation: Any) -> tuple[Any, bool]:
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0], len(args) < len(get_args(annotation))
    return annotation, False


def design_field(path: str, model: type[BaseModel] = Design) -> DesignField:
    """Resolve ``path`` (e.g. ``consumers.agent.instances``) to a leaf field of ``model``.

    Raises UnknownField when a part is missing or the path stops at a section, not a value.
    """
    current: type[BaseModel] = model
    parts = path.split(".")
    for i, part in enumerate(parts):
        info = current.model_fields.get(part)
        if info is None:
            raise UnknownField(path, f"the design has no field {'.'.join(parts[: i + 1])!r}")
        annotation, optional = _strip_optional(info.annotation)
        is_section = isinstance(annotation, type) and issubclass(annotation, BaseModel)
        if i == len(parts) - 1:
            if is_section:
                raise UnknownField(path, "this is a section; name one of its fields")
            return DesignField(path, annotation, optional, info)
        if not is_section:
            raise UnknownField(path, f"{'.'.join(parts[: i + 1])!r} is a value, not a section")
        current = annotation
    raise UnknownField(path, "empty path")


def get_value(design: BaseModel, path: str) -> Any:
    """The value at ``path`` in ``design`` (enums as their values)."""
    value: Any = design
    for part in path.split("."):
        value = getattr(value, part)
    return value.value if isinstance(value, Enum) else value


def with_values(design: Design, values: dict[str, Any]) -> Design:
    """A copy of ``design`` with each ``path: value`` set, validated as a whole.

    Raises pydantic.ValidationError naming the field paths that are wrong.
    """
    data = design.model_dump(mode="json")
    for path, value in values.items():
        node = data
        *parents, leaf = path.split(".")
        for part in parents:
            node = node[part]
        node[leaf] = value
    return Design.model_validate(data)
