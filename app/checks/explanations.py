"""Explanation templates: sandboxed Jinja2 over the names a check expression sees.

An explanation shows the formula with the learner's numbers, for example
``{{ design.event_log.partitions }} partitions / {{ fmt(metrics.capacity_eps) }} events/s``.
Templates render in an immutable sandbox that reaches only the fields of app.checks.names
(no methods, no private attributes), with undefined names an error rather than blank text.
Output is plain text; the web layer escapes it.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import threading
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from jinja2 import FunctionLoader, StrictUndefined, Template, TemplateSyntaxError, nodes
from jinja2.bccache import Bucket, BytecodeCache, FileSystemBytecodeCache
from jinja2.sandbox import ImmutableSandboxedEnvironment

from app.checks.names import (
    CONSTANTS,
    FUNCTIONS,
    ROOT_TYPES,
    UnknownAttribute,
    UnknownKey,
    allowed_attributes,
    attribute_type,
    comparison_problem,
    fault_type,
    key_type,
    known_names,
)
from simulator.scenario import Scenario

ReadScenario = tuple[str, Scenario]
"""The scenario a template reads, with its name (as app.checks.expressions.ReadScenario)."""


class ExplanationError(Exception):
    """A template could not be rendered; the message says why."""


class _ExplanationEnvironment(ImmutableSandboxedEnvironment):
    """The sandbox, narrowed: on designlab's models only fields and properties are readable."""

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        allowed = allowed_attributes().get(type(obj))
        if allowed is not None:
            return attr in allowed
        return bool(super().is_safe_attribute(obj, attr, value))


def _environment() -> _ExplanationEnvironment:
    # optimized=False skips Jinja's constant-folding pass: an explanation renders a handful of
    # times at most, and the pass was a third of compiling one (the same text either way).
    env = _ExplanationEnvironment(
        undefined=StrictUndefined,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        optimized=False,
    )
    env.globals.clear()
    env.globals.update(FUNCTIONS)
    env.filters["fmt"] = FUNCTIONS["fmt"]
    return env


class _QuietBytecodeCache(FileSystemBytecodeCache):
    """Jinja's cache of compiled templates on disk, in its per-user directory under the temporary
    directory (made private by Jinja), that fails quietly: a cache it cannot read or write costs
    only the compiling. A file holds the code Jinja generated for one template text; Jinja checks
    its own and Python's versions and the text's checksum before it uses one."""

    def load_bytecode(self, bucket: Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except (OSError, EOFError, ValueError):
            bucket.reset()

    def dump_bytecode(self, bucket: Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)


def _bytecode_cache() -> BytecodeCache | None:
    """The cache of compiled explanation templates, or None when no safe directory exists.

    Compiling is most of what an explanation costs: about 100 templates a grade, 0.15 s of a
    command-line grade that would otherwise compile every one again."""
    try:
        return _QuietBytecodeCache(pattern="designlab-explanation-%s.cache")
    except (OSError, RuntimeError):
        return None


_ENV = _environment()
_SOURCES: dict[str, str] = {}
"""Template name (its settings' and text's digest) -> its text, while the loader reads it."""
_SETTINGS = repr(
    (type(_ENV).__qualname__, _ENV.trim_blocks, _ENV.lstrip_blocks, _ENV.optimized)
).encode()
_ENV.loader = FunctionLoader(lambda name: (_SOURCES[name], None, lambda: True))
_ENV.bytecode_cache = _bytecode_cache()


_compile_lock = threading.Lock()
"""Jinja compiles a template with Python's ``compile``, which shares ``ast.parse``'s trouble in
CPython 3.11 when two threads parse at once (see app.checks.expressions.parse): serialise it."""


@lru_cache(maxsize=1024)
def parsed(template: str) -> nodes.Template:
    """The template's syntax tree (cached per text); raises TemplateSyntaxError."""
    return _ENV.parse(template)


@lru_cache(maxsize=1024)
def _compiled(template: str) -> Template:
    """The compiled template: from the bytecode cache when it holds this text, else compiled
    (and stored there); raises TemplateSyntaxError."""
    name = hashlib.sha256(_SETTINGS + b"\0" + template.encode()).hexdigest()
    with _compile_lock:
        _SOURCES[name] = template
        try:
            return _ENV.get_template(name)
        finally:
            del _SOURCES[name]  # needed only while it loads (its up-to-date check is constant)


_SPACES = re.compile(r"[ \t]*\n[ \t]*|[ \t]{2,}")


def render_explanation(template: str, names: Mapping[str, Any]) -> str:
    """Render ``template`` over ``names``; whitespace is collapsed to single spaces.

    Raises ExplanationError for a syntax error, an undefined name, a blocked attribute or any
    other failure while rendering.
    """
    if "{" not in template and "\r" not in template:
        # No Jinja syntax ({{, {% or {#) and no carriage return for Jinja to turn into a line
        # feed: the template renders to itself (less a last line feed, which the collapse below
        # drops anyway). Most messages are such plain text; compiling each cost about a
        # millisecond of every grade.
        return _SPACES.sub(" ", template).strip()
    try:
        text = _compiled(template).render(**names)
    except TemplateSyntaxError as exc:
        message = f"template does not parse (line {exc.lineno}): {exc.message}"
        raise ExplanationError(message) from exc
    except Exception as exc:
        raise ExplanationError(f"{type(exc).__name__}: {exc}") from exc
    return _SPACES.sub(" ", text).strip()


def _walk_type(
    node: nodes.Node,
    shadowed: set[str],
    scenario: ReadScenario | None = None,
    resolved: dict[str, Any] | None = None,
) -> Any:
    """The type an attribute chain reaches, or Any when unknown; raises UnknownAttribute as
    app.checks.expressions' walk does. ``resolved``: the types of the names the template sets
    once at its top level (:func:`_set_types`); other names it binds are Any."""
    if isinstance(node, nodes.Name):
        if resolved is not None and node.name in resolved:
            return resolved[node.name]
        return Any if node.name in shadowed else ROOT_TYPES.get(node.name, Any)
    if isinstance(node, nodes.Getattr):
        owner = _walk_type(node.node, shadowed, scenario, resolved)
        return Any if owner is Any else attribute_type(owner, node.attr, keys_as_attributes=True)
    if isinstance(node, nodes.Getitem):
        key = node.arg.value if isinstance(node.arg, nodes.Const) else None
        if scenario is not None and _is_faults(node.node, shadowed):
            return fault_type(scenario[1], scenario[0], key)
        owner = _walk_type(node.node, shadowed, scenario, resolved)
        return Any if owner is Any else key_type(owner, key)
    return Any


def _is_faults(node: nodes.Node, shadowed: set[str]) -> bool:
    """Whether ``node`` is ``scenario.faults`` (the root, not a name the template binds)."""
    return (
        isinstance(node, nodes.Getattr)
        and node.attr == "faults"
        and isinstance(node.node, nodes.Name)
        and node.node.name == "scenario"
        and "scenario" not in shadowed
    )


def _set_types(
    tree: nodes.Template, found: list[nodes.Node], scenario: ReadScenario | None
) -> dict[str, Any]:
    """The type of each name the template sets once, at its top level (``{% set f =
    scenario.faults[1] %}``), so that ``f.instances`` is checked like the path it stands for
    (steps/README: put ``{% set %}`` at the top level). A name bound anywhere else, or twice,
    is left out (Any)."""
    stores: dict[str, int] = {}
    for n in found:
        if isinstance(n, nodes.Name) and n.ctx in ("store", "param"):
            stores[n.name] = stores.get(n.name, 0) + 1
    shadowed = set(stores)
    resolved: dict[str, Any] = {}
    for statement in tree.body:
        if (
            isinstance(statement, nodes.Assign)
            and isinstance(statement.target, nodes.Name)
            and stores[statement.target.name] == 1
        ):
            try:
                kind = _walk_type(statement.node, shadowed, scenario, resolved)
            except UnknownAttribute:
                kind = Any  # reported where the path is read
            resolved[statement.target.name] = kind
    return resolved


def _path(node: nodes.Node) -> str:
    """A name, attribute and item chain as the author wrote it (``metrics.by_group["agent"]``);
    ``...`` for anything else."""
    if isinstance(node, nodes.Name):
        return node.name
    if isinstance(node, nodes.Getattr):
        return f"{_path(node.node)}.{node.attr}"
    if isinstance(node, nodes.Getitem):
        key = repr(node.arg.value) if isinstance(node.arg, nodes.Const) else "..."
        return f"{_path(node.node)}[{key}]"
    return "..."


def _constants(node: nodes.Node) -> list[object] | None:
    """The constants of a literal tuple or list (``("all", "1")``), else None."""
    if isinstance(node, nodes.Tuple | nodes.List) and all(
        isinstance(item, nodes.Const) for item in node.items
    ):
        return [item.value for item in node.items if isinstance(item, nodes.Const)]
    return None


def _comparison_problems(node: nodes.Compare, walk: Any) -> list[str]:
    """As app.checks.expressions' comparisons: an enum or Literal field compared with a value it
    never holds, a constant key tested with ``in`` against a dict that never holds it.
    ``walk``: node -> type (Any when the walk fails)."""
    problems: list[str] = []
    sides = [node.expr, *(operand.expr for operand in node.ops)]
    for left, operand, right in zip(sides, node.ops, sides[1:], strict=False):
        pairs: list[tuple[nodes.Node, object]] = []
        if operand.op in ("eq", "ne"):
            if isinstance(right, nodes.Const):
                pairs.append((left, right.value))
            elif isinstance(left, nodes.Const):
                pairs.append((right, left.value))
        elif operand.op in ("in", "notin"):
            if (values := _constants(right)) is not None:
                pairs += [(left, value) for value in values]
            elif isinstance(left, nodes.Const) and isinstance(left.value, str):
                try:
                    key_type(walk(right), left.value)
                except UnknownAttribute as exc:
                    problems.append(f"template line {node.lineno}: {_path(right)}: {exc}")
        for field, value in pairs:
            why = comparison_problem(walk(field), value)
            if why is not None:
                problems.append(f"template line {node.lineno}: {_path(field)}: {why}")
    return problems


def _all_nodes(tree: nodes.Template) -> list[nodes.Node]:
    """Every node of the tree in document order (``Node.find_all``'s order), from one walk:
    the lint reads the same tree several ways, and Jinja's recursive generators were most of
    the course's load time."""
    out: list[nodes.Node] = []
    stack: list[nodes.Node] = [tree]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(reversed(list(node.iter_child_nodes())))
    return out[1:]


def _assigned_names(found: list[nodes.Node]) -> set[str]:
    """Names a template binds itself ({% set %}, {% for %} targets), which shadow the roots."""
    return {n.name for n in found if isinstance(n, nodes.Name) and n.ctx in ("store", "param")}


def _undeclared_names(found: list[nodes.Node]) -> set[str]:
    """Names the template reads and does not bind itself (anywhere: {% set %}, {% for %},
    {% with %}); ``loop`` is bound inside a {% for %}. ``found``: :func:`_all_nodes`.

    A walk of the syntax tree: jinja2.meta.find_undeclared_variables runs the whole code
    generator for this, which made loading the course several times slower."""
    bound = _assigned_names(found)
    if any(isinstance(n, nodes.For) for n in found):
        bound.add("loop")
    return {n.name for n in found if isinstance(n, nodes.Name) and n.ctx == "load"} - bound


def template_names(template: str) -> frozenset[str]:
    """Root names a template reads (raises TemplateSyntaxError when it does not parse)."""
    return frozenset(_undeclared_names(_all_nodes(parsed(template))))


def _unknown_filters_and_tests(found: list[nodes.Node]) -> list[str]:
    """A filter or test the environment does not have, as Jinja words it when compiling."""
    problems = []
    for node in found:
        if isinstance(node, nodes.Filter):
            kind, known = "filter", _ENV.filters
        elif isinstance(node, nodes.Test):
            kind, known = "test", _ENV.tests
        else:
            continue
        if node.name not in known:
            problems.append(f"template line {node.lineno}: No {kind} named {node.name!r}.")
    return problems


def explanation_problems(template: str, scenario: ReadScenario | None = None) -> list[str]:
    """Everything wrong with a template before it renders: syntax, unknown names, fields and
    dict keys, an enum compared with a value it never holds, and with the ``scenario`` it reads,
    a fault past its faults (or a field its fault lacks). Names set once at the top level are
    checked through what they stand for."""
    try:
        tree = parsed(template)
    except TemplateSyntaxError as exc:
        return [f"template does not parse (template line {exc.lineno}): {exc.message}"]
    found = _all_nodes(tree)
    problems = _unknown_filters_and_tests(found)
    undeclared = _undeclared_names(found)
    allowed = set(ROOT_TYPES) | set(FUNCTIONS) | CONSTANTS | {"true", "false", "none"}
    for name in sorted(undeclared - allowed):
        problems.append(f"unknown name {name!r}; known names: {', '.join(known_names())}")
    shadowed = _assigned_names(found)
    resolved = _set_types(tree, found, scenario)

    def walk(node: nodes.Node) -> Any:
        try:
            return _walk_type(node, shadowed, scenario, resolved)
        except UnknownAttribute:
            return Any

    at: dict[str, str] = {}  # each walk error at the innermost node that raises it
    for node in found:
        if isinstance(node, nodes.Getattr | nodes.Getitem):
            try:
                _walk_type(node, shadowed, scenario, resolved)
            except UnknownAttribute as exc:
                path = f"{_path(node)}: " if isinstance(exc, UnknownKey) else ""
                at[str(exc)] = f"template line {node.lineno}: {path}"
        elif isinstance(node, nodes.Compare):
            problems += _comparison_problems(node, walk)
    problems += [f"{where}{message}" for message, where in at.items()]
    return list(dict.fromkeys(problems))
