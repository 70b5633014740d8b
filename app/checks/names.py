"""The names a check's ``expr`` and ``explain`` see, their types, and the attributes they allow.

Every check, explanation and step figure is evaluated over the same names:

- ``design`` (simulator.design.Design), ``scenario`` (simulator.scenario.Scenario or None),
  ``metrics`` (simulator.result.Metrics or None), ``cost`` (simulator.result.Cost or None),
  ``estimate`` (simulator.estimate.Estimate, or None), ``budget_usd`` (float, US dollars/month);
- the functions min, max, abs, round, len, ``fmt(x, digits=1, limit=None)``,
  ``plural(n, noun, nouns=None)`` (a count with its noun: "1 event", "3,507 events"),
  ``pct(part, whole, limit)`` and
  ``usd(amount, limit)`` (a percentage and money printed so that they never read against the
  verdict beside them), ``cost_groups(cost)`` (the bill's dollars per group, largest first:
  app.checks.cost_groups), ``cost_changes(cost, baseline)`` (what moved between two bills,
  line by line, largest increase first) and ``paid_repeats_usd(cost)`` (model calls paid twice).

Attribute access is limited to the fields (and properties) of the pydantic models reachable from
those names, plus ``.value`` of an enum: a method such as ``model_dump`` cannot be reached. Lint
uses the same type walk to reject an unknown name or field before a learner ever meets it, a key
a dict never holds (DICT_KEYS: consumer groups, capacity limits, cost components), an enum
compared with a value it does not have, and a fault past the faults of the scenario a check reads.
"""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from functools import cache
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel

from app.checks.cost_groups import COMPONENT_LABELS, cost_changes, cost_groups, paid_repeats_usd
from simulator.capacity import LimitingFactor
from simulator.design import Design
from simulator.estimate import Estimate
from simulator.estimate.figures import GroupEstimate
from simulator.groups import GROUPS
from simulator.result import Cost, GroupMetrics, Metrics
from simulator.scenario import Scenario


def fmt(value: Any, digits: int = 1, limit: float | None = None) -> str:
    """A number for an explanation: ``fmt(12960)`` -> ``12,960``, ``fmt(83.333)`` -> ``83.3``.

    Integers get thousands separators; floats ``digits`` decimals (0 for whole units); None
    reads ``n/a``; anything else is shown as text (enum members by their value). With ``limit``
    (the threshold a verdict compares the float with) the decimals grow until the printed figure
    sits on the same side of it as the true one: ``fmt(1.6497, 1, 1.6)`` -> ``1.65``, not ``1.6``.
    """
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return "never" if value > 0 else "n/a"
        shown = max(int(digits), 0)
        if limit is not None:
            shown = _digits_for(value, float(limit), shown)
        return f"{value:,.{shown}f}"
    if isinstance(value, Enum):
        return str(value.value)
    return str(value)


def plural(count: Any, noun: str, nouns: str | None = None) -> str:
    """A count with its noun, singular for one: ``plural(1, "event")`` -> ``1 event``,
    ``plural(3507, "event")`` -> ``3,507 events``; with the plural given, a verb can agree too:
    ``plural(1, "saga holds", "sagas hold")`` -> ``1 saga holds``.

    The count is printed by :func:`fmt` as a whole number (thousands separators, ``n/a`` for
    None); the plural is ``nouns``, else the noun with an ``s``.
    """
    many = nouns if nouns is not None else f"{noun}s"
    return f"{fmt(count, 0)} {noun if count == 1 else many}"


def _digits_for(value: float, limit: float | None, digits: int) -> int:
    """Decimals at which ``value`` printed falls on the same side of ``limit`` as ``value``
    (and is not printed equal to it unless it is equal): at most 4 more than ``digits``."""
    if limit is None or value == limit:
        return digits
    for d in range(digits, digits + 5):
        shown = round(value, d)
        if (shown > limit) == (value > limit) and shown != limit:
            return d
    return digits + 4


def pct(part: float, whole: float = 1.0, limit: float | None = None, digits: int = 0) -> str:
    """``part`` as a percentage of ``whole``: ``pct(63.7, 85)`` -> ``75 %``. With ``limit`` (in
    the unit of ``part``) the decimals grow until the printed figure sits on the same side of the
    limit as the true one, so a verdict never reads against its number: ``pct(85012, 85000,
    85000)`` -> ``100.01 %``, not ``100 %``. ``n/a`` when ``whole`` is 0."""
    if not whole:
        return "n/a"
    value = 100.0 * part / whole
    bound = None if limit is None else 100.0 * limit / whole
    return f"{value:,.{_digits_for(value, bound, digits)}f} %"


def usd(amount: float, limit: float | None = None) -> str:
    """US dollars, whole: ``usd(73430.2)`` -> ``$73,430``; with ``limit`` cents appear when the
    whole dollars would read equal to it though the amount is not (``$85,000.40``)."""
    digits = 2 if _digits_for(amount, limit, 0) else 0
    return f"${amount:,.{digits}f}"


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "min": min,
    "max": max,
    "abs": abs,
    "round": round,
    "len": len,
    "fmt": fmt,
    "plural": plural,
    "pct": pct,
    "usd": usd,
    "cost_groups": cost_groups,
    "cost_changes": cost_changes,
    "paid_repeats_usd": paid_repeats_usd,
}
"""The only functions an expression or template may call."""


ROOT_TYPES: dict[str, Any] = {
    "design": Design,
    "scenario": Scenario,
    "metrics": Metrics,
    "cost": Cost,
    "estimate": Estimate,
    "budget_usd": float,
    "baseline_cost": Cost,
}
"""Each name an expression may read, with its type (None is allowed for all but design)."""

CONSTANTS = frozenset({"True", "False", "None"})


def known_names() -> list[str]:
    """Every name an expression may use, sorted: the roots, then the functions."""
    return sorted(ROOT_TYPES) + sorted(FUNCTIONS)


def members(annotation: Any) -> list[Any]:
    """Concrete types behind an annotation: ``X | None`` -> [X], ``Annotated[A | B]`` -> [A, B]."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return members(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        found: list[Any] = []
        for arg in get_args(annotation):
            if arg is not type(None):
                found += members(arg)
        return found
    if origin is Literal:
        return sorted({type(arg) for arg in get_args(annotation)}, key=lambda t: t.__name__)
    return [annotation]


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _is_enum(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, Enum)


@dataclass(frozen=True)
class Keys:
    """The keys a dict-valued field can hold, carried on its annotation
    (``Annotated[dict[str, X], Keys(...)]``) so that lint refuses a key grading would not find.
    ``what`` names one key in the author's terms ("consumer group")."""

    what: str
    values: tuple[str, ...]


_LIMITS = tuple(factor.value for factor in LimitingFactor)

DICT_KEYS: dict[tuple[type[BaseModel], str], Keys] = {
    (Metrics, "by_group"): Keys("consumer group", GROUPS),
    (Estimate, "by_group"): Keys("consumer group", GROUPS),
    (GroupMetrics, "limits_utilisation"): Keys("capacity limit", _LIMITS),
    (GroupEstimate, "limits_eps"): Keys("capacity limit", _LIMITS),
    (Cost, "by_component"): Keys("cost component", tuple(COMPONENT_LABELS)),
}
"""The keys of every dict-valued field a check can read, by (model, field): the consumer groups
(simulator.groups), the capacity limits (simulator.capacity.LimitingFactor, the keys of
``capacity_limits``) and the bill's components (simulator.cost names them; app.checks.cost_groups
labels each). A key outside them is absent from every run (a KeyError when graded); a group or
limit inside them may still be absent from one run (a group with no load, a limit of another
group)."""


@cache
def model_attributes(model: type[BaseModel]) -> dict[str, Any]:
    """A model's readable attributes: every field and every property, with their types; a
    dict-valued field of DICT_KEYS is ``Annotated`` with its Keys."""
    found: dict[str, Any] = {
        name: Annotated[info.annotation, DICT_KEYS[(model, name)]]
        if (model, name) in DICT_KEYS
        else info.annotation
        for name, info in model.model_fields.items()
    }
    for klass in reversed(model.__mro__):
        for name, value in vars(klass).items():
            if isinstance(value, property) and not name.startswith("_") and value.fget is not None:
                hints = typing.get_type_hints(value.fget)
                found[name] = hints.get("return", Any)
    return found


class UnknownAttribute(LookupError):
    """``owner.attr`` names nothing readable; the message suggests the nearest names."""


class UnknownKey(UnknownAttribute):
    """``container[key]`` with a key a dict of DICT_KEYS never holds."""


def _suggest(wrong: str, known: list[str]) -> str:
    close = difflib.get_close_matches(wrong, known, n=3)
    return f"; did you mean {', '.join(close)}?" if close else ""


def dict_keys(annotation: Any) -> Keys | None:
    """The Keys an annotation carries (a field of DICT_KEYS), else None."""
    if get_origin(annotation) is Annotated:
        return next((m for m in annotation.__metadata__ if isinstance(m, Keys)), None)
    return None


def key_type(container: Any, key: object) -> Any:
    """The type of ``container[key]`` (as item_type); raises UnknownAttribute when ``container``
    is a dict of DICT_KEYS and ``key`` a string that is none of its keys (UnknownKey)."""
    keys = dict_keys(container)
    if keys is not None and isinstance(key, str) and key not in keys.values:
        raise UnknownKey(
            f"no {keys.what} {key!r}: the {keys.what}s are {', '.join(keys.values)}"
            + _suggest(key, list(keys.values))
        )
    return item_type(container)


@cache
def _is_dict(annotation: Any) -> bool:
    """Whether an annotation (hashable, as every one the walk reaches) is a dict."""
    return any(get_origin(tp) is dict for tp in members(annotation))


def attribute_type(owner: Any, attr: str, *, keys_as_attributes: bool = False) -> Any:
    """The type of ``owner.attr`` for a type reached by the walk, or Any when it cannot be known.

    Raises UnknownAttribute when every concrete type behind ``owner`` is a model or an enum and
    none of them has ``attr``. On a dict, ``attr`` is a key with ``keys_as_attributes`` (Jinja
    falls back to the item: ``metrics.by_group.agent``), else an error (simpleeval reads no
    attribute of a dict).
    """
    if _is_dict(owner):
        if keys_as_attributes:
            return key_type(owner, attr)
        raise UnknownAttribute(f"a mapping has no attributes: read its key with [{attr!r}]")
    options = members(owner)
    if any(not (_is_model(tp) or _is_enum(tp)) for tp in options):
        if all(tp in (str, int, float, bool) for tp in options):
            raise UnknownAttribute(f"{_type_name(owner)} has no attribute {attr!r}")
        return Any
    found: list[Any] = []
    allowed: set[str] = set()
    for tp in options:
        names = model_attributes(tp) if _is_model(tp) else {"value": str}
        allowed |= set(names)
        if attr in names:
            found.append(names[attr])
    if not found:
        hint = _suggest(attr, sorted(allowed))
        raise UnknownAttribute(f"{_type_name(owner)} has no field {attr!r}{hint}")
    return found[0] if len(found) == 1 else Union[tuple(found)]  # noqa: UP007 - runtime union


def item_type(container: Any) -> Any:
    """The element type of ``container[...]``: dict[str, X] -> X, list[X] -> X, else Any."""
    for tp in members(container):
        origin = get_origin(tp)
        args = get_args(tp)
        if origin is dict and len(args) == 2:
            return args[1]
        if origin in (list, tuple) and args:
            return args[0]
    return Any


def _alternatives(annotation: Any) -> list[Any]:
    """The arms of a union, Annotated unwrapped, Literal kept whole: ``X | None`` -> [X, None]."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _alternatives(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        return [arm for arg in get_args(annotation) for arm in _alternatives(arg)]
    return [annotation]


def allowed_values(annotation: Any) -> tuple[Any, ...] | None:
    """The values a Literal- or enum-typed field can hold (an enum by its value, as the design
    file spells it), or None when its type admits other values too (``int | Literal["all"]``)."""
    values: list[Any] = []
    for arm in _alternatives(annotation):
        if arm is type(None) or arm is None:
            continue
        if get_origin(arm) is Literal:
            values += get_args(arm)
        elif _is_enum(arm):
            values += [member.value for member in arm]
        else:
            return None
    return tuple(values) or None


def comparison_problem(annotation: Any, constant: object) -> str | None:
    """Why comparing a field of type ``annotation`` with ``constant`` (==, !=, in) judges
    nothing: a string or number that is none of the field's values (a misspelt enum value is
    never equal, so the comparison is constant whatever the design). None when it can be."""
    values = allowed_values(annotation)
    if values is None or not isinstance(constant, str | int | float) or isinstance(constant, bool):
        return None
    if constant in values:
        return None
    shown = ", ".join(repr(v) for v in values)
    hint = (
        _suggest(constant, [v for v in values if isinstance(v, str)])
        if isinstance(constant, str)
        else ""
    )
    return (
        f"{constant!r} is none of its values ({shown}), so the comparison gives the same "
        f"answer whatever the value{hint}"
    )


class PastTheFaults(UnknownAttribute):
    """``scenario.faults[N]`` past the faults of the scenario a check reads; the message names
    the path itself."""


def fault_type(scenario: Scenario, name: str, index: object) -> Any:
    """The type of ``scenario.faults[index]`` in the scenario a check reads (named ``name``):
    the fault's own class, so its fields are known exactly; Any for an index that is not a
    whole number. Raises PastTheFaults for an index past the scenario's faults."""
    if not isinstance(index, int) or isinstance(index, bool):
        return Any
    count = len(scenario.faults)
    if not -count <= index < count:
        raise PastTheFaults(
            f"reads scenario.faults[{index}], but scenario {name!r} has {count} fault(s): "
            f"graded, it fails (no element {index})"
        )
    return type(scenario.faults[index])


def _type_name(tp: Any) -> str:
    names = [getattr(t, "__name__", str(t)) for t in members(tp)]
    return " | ".join(names)


@cache
def allowed_attributes() -> dict[type, set[str]]:
    """simpleeval's ``allowed_attrs``: reachable models' fields and properties, enums' value."""
    allowed: dict[type, set[str]] = {}
    pending = [tp for root in ROOT_TYPES.values() for tp in members(root)]
    while pending:
        tp = pending.pop()
        if tp in allowed:
            continue
        if _is_enum(tp):
            allowed[tp] = {"value"}
        elif _is_model(tp):
            attributes = model_attributes(tp)
            allowed[tp] = set(attributes)
            for annotation in attributes.values():
                pending += members(annotation)
                pending += members(item_type(annotation))
    return allowed
