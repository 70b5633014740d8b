"""Check expressions: evaluated with simpleeval (never eval) and checked statically by lint.

An expression is one Python expression over the names of app.checks.names, for example
``metrics.lost == 0 and design.delivery.commit == "after_processing"``. Literals, arithmetic,
comparisons, ``and``/``or``/``not``, ``x if c else y``, subscripts (``metrics.by_group["agent"]``),
lists and tuples (``design.event_log.acks in ("all",)``) and the functions of ``FUNCTIONS`` are
available; assignment, lambda, imports and methods are not.
"""

from __future__ import annotations

import ast
import threading
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from simpleeval import EvalWithCompoundTypes

from app.checks.names import (
    CONSTANTS,
    FUNCTIONS,
    ROOT_TYPES,
    PastTheFaults,
    UnknownAttribute,
    allowed_attributes,
    attribute_type,
    comparison_problem,
    fault_type,
    key_type,
    known_names,
)
from simulator.scenario import Scenario

ReadScenario = tuple[str, Scenario]
"""The scenario a check reads, with its name: lint then knows its faults (``scenario.faults[N]``
in range, and of which kind)."""


class ExpressionError(Exception):
    """An expression could not be evaluated; the message says why in the author's terms."""


def _evaluator(names: Mapping[str, Any]) -> EvalWithCompoundTypes:
    return EvalWithCompoundTypes(
        names=dict(names), functions=dict(FUNCTIONS), allowed_attrs=allowed_attributes()
    )


_SUPPORTED_NODES: tuple[type, ...] = tuple(
    node for node in _evaluator({}).nodes if issubclass(node, ast.expr)
) + (ast.comprehension,)


_parse_lock = threading.Lock()


@lru_cache(maxsize=4096)
def parse(expr: str) -> ast.Expression:
    """The expression's syntax tree, parsed once per process (raises SyntaxError).

    Parsing is serialised: CPython 3.11's ``ast.parse`` called from two threads at once can fail
    with ``SystemError: AST constructor recursion depth mismatch`` (pages render in a thread
    pool). The tree is only read afterwards, so threads share it safely.
    """
    with _parse_lock:
        return ast.parse(expr.strip(), mode="eval")


@lru_cache(maxsize=4096)
def names_used(expr: str) -> frozenset[str]:
    """Root names an expression reads, found once per process (raises SyntaxError when it
    does not parse)."""
    tree = parse(expr)
    return frozenset(node.id for node in ast.walk(tree) if isinstance(node, ast.Name))


def evaluate(expr: str, names: Mapping[str, Any]) -> Any:
    """Evaluate ``expr`` over ``names`` with simpleeval; return its value.

    Raises ExpressionError when the expression reads a name whose value is None (``metrics`` in
    a step without a scenario), or when evaluation fails for any reason (the message names it).
    """
    try:
        used = names_used(expr)
    except SyntaxError as exc:
        raise ExpressionError(f"expression does not parse: {exc.msg}") from exc
    missing = sorted(n for n in used if n in ROOT_TYPES and names.get(n) is None)
    if missing:
        raise ExpressionError(
            f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not available here "
            "(a check that reads metrics or cost needs a scenario)"
        )
    try:
        return _evaluator(names).eval(expr.strip(), previously_parsed=parse(expr).body)
    except Exception as exc:
        raise ExpressionError(f"{type(exc).__name__}: {exc}") from exc


def _bound_names(found: list[ast.AST]) -> set[str]:
    """Names bound by comprehension targets (``g`` in ``[g.instances for g in ...]``);
    ``found``: every node of the expression."""
    bound: set[str] = set()
    for node in found:
        if isinstance(node, ast.comprehension):
            bound |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
    return bound


def _is_faults(node: ast.expr, bound: set[str]) -> bool:
    """Whether ``node`` is ``scenario.faults`` (the root, not a name bound in the expression)."""
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "faults"
        and isinstance(node.value, ast.Name)
        and node.value.id == "scenario"
        and "scenario" not in bound
    )


def _walk_type(node: ast.expr, bound: set[str], scenario: ReadScenario | None = None) -> Any:
    """The type an attribute chain reaches, or Any when unknown; raises UnknownAttribute for an
    unknown field, a key a dict of app.checks.names.DICT_KEYS never holds, or (with the
    ``scenario`` the check reads) an index past its faults."""
    if isinstance(node, ast.Name):
        return Any if node.id in bound else ROOT_TYPES.get(node.id, Any)
    if isinstance(node, ast.Attribute):
        owner = _walk_type(node.value, bound, scenario)
        return Any if owner is Any else attribute_type(owner, node.attr)
    if isinstance(node, ast.Subscript):
        key = node.slice.value if isinstance(node.slice, ast.Constant) else None
        if scenario is not None and _is_faults(node.value, bound):
            return fault_type(scenario[1], scenario[0], key)
        owner = _walk_type(node.value, bound, scenario)
        return Any if owner is Any else key_type(owner, key)
    return Any


def _type_or_any(node: ast.expr, bound: set[str], scenario: ReadScenario | None) -> Any:
    try:
        return _walk_type(node, bound, scenario)
    except UnknownAttribute:
        return Any  # reported by the walk of the node itself


def _constants(node: ast.expr) -> list[object] | None:
    """The constants of a literal tuple, list or set (``("all", "1")``), else None."""
    if isinstance(node, ast.Tuple | ast.List | ast.Set) and all(
        isinstance(e, ast.Constant) for e in node.elts
    ):
        return [e.value for e in node.elts if isinstance(e, ast.Constant)]
    return None


def _comparison_problems(
    node: ast.Compare, bound: set[str], scenario: ReadScenario | None
) -> list[str]:
    """A field of enum or Literal type compared (==, !=, in, not in) with a value it never
    holds, and a constant key tested with ``in`` against a dict that never holds it."""
    problems: list[str] = []
    sides = [node.left, *node.comparators]
    for left, op, right in zip(sides, node.ops, sides[1:], strict=False):
        pairs: list[tuple[ast.expr, object]] = []
        if isinstance(op, ast.Eq | ast.NotEq):
            if isinstance(right, ast.Constant):
                pairs.append((left, right.value))
            elif isinstance(left, ast.Constant):
                pairs.append((right, left.value))
        elif isinstance(op, ast.In | ast.NotIn):
            if (values := _constants(right)) is not None:
                pairs += [(left, value) for value in values]
            elif isinstance(left, ast.Constant) and isinstance(left.value, str):
                try:
                    key_type(_type_or_any(right, bound, scenario), left.value)
                except UnknownAttribute as exc:
                    problems.append(f"{ast.unparse(right)}: {exc}")
        for field, value in pairs:
            why = comparison_problem(_type_or_any(field, bound, scenario), value)
            if why is not None:
                problems.append(f"{ast.unparse(field)}: {why}")
    return problems


def expression_problems(expr: str, scenario: ReadScenario | None = None) -> list[str]:
    """Everything wrong with an expression before it runs: syntax, unsupported syntax, unknown
    names, functions, fields and dict keys, an enum compared with a value it never holds, and
    with the ``scenario`` the expression reads, a fault past its faults (or a field its fault
    lacks). Returns messages; an empty list means it is well formed."""
    try:
        tree = parse(expr)
    except SyntaxError as exc:
        return [f"expression does not parse: {exc.msg}"]
    problems: list[str] = []
    found = list(ast.walk(tree))
    bound = _bound_names(found)
    allowed = set(ROOT_TYPES) | set(FUNCTIONS) | CONSTANTS | bound
    for node in found:
        if isinstance(node, ast.expr) and not isinstance(node, _SUPPORTED_NODES):
            problems.append(f"{type(node).__name__} is not supported in a check expression")
        elif isinstance(node, ast.Name) and node.id not in allowed:
            problems.append(f"unknown name {node.id!r}; known names: {', '.join(known_names())}")
        elif isinstance(node, ast.Call) and not (
            isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS
        ):
            problems.append(
                f"only {', '.join(sorted(FUNCTIONS))} can be called: {ast.unparse(node.func)}()"
            )
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            problems.append(f"attribute {node.attr!r} is private")
    at: dict[str, str] = {}  # each walk error at the innermost node that raises it
    for node in found:
        if isinstance(node, ast.Attribute | ast.Subscript):
            try:
                _walk_type(node, bound, scenario)
            except UnknownAttribute as exc:
                at[str(exc)] = "" if isinstance(exc, PastTheFaults) else ast.unparse(node)
        elif isinstance(node, ast.Compare):
            problems += _comparison_problems(node, bound, scenario)
    problems += [f"{text}: {message}" if text else message for message, text in at.items()]
    return list(dict.fromkeys(problems))
