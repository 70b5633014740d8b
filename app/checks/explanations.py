"""Explanation templates: sandboxed Jinja2 over the names a check expression sees.

An explanation shows the formula with the learner's numbers, for example
``{{ design.event_log.partitions }} partitions / {{ fmt(metrics.capacity_eps) }} events/s``.
Templates render in an immutable sandbox that reaches only the fields of app.checks.names
(no methods, no private attributes), with undefined names an error rather than blank text.
Output is plain text; the web layer escapes it.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from jinja2 import StrictUndefined, Template, TemplateSyntaxError, nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment

from app.checks.names import (
    CONSTANTS,
    FUNCTIONS,
    ROOT_TYPES,
    UnknownAttribute,
    allowed_attributes,
    attribute_type,
    item_type,
    known_names,
)


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


_ENV = _environment()


_compile_lock = threading.Lock()
"""Jinja compiles a template with Python's ``compile``, which shares ``ast.parse``'s trouble in
CPython 3.11 when two threads parse at once (see app.checks.expressions.parse): serialise it."""


@lru_cache(maxsize=1024)
def parsed(template: str) -> nodes.Template:
    """The template's syntax tree (cached per text); raises TemplateSyntaxError."""
    return _ENV.parse(template)


@lru_cache(maxsize=1024)
def _compiled(template: str) -> Template:
    with _compile_lock:
        return _ENV.from_string(parsed(template))


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


def _walk_type(node: nodes.Node, shadowed: set[str]) -> Any:
    if isinstance(node, nodes.Name):
        return Any if node.name in shadowed else ROOT_TYPES.get(node.name, Any)
    if isinstance(node, nodes.Getattr):
        owner = _walk_type(node.node, shadowed)
        return Any if owner is Any else attribute_type(owner, node.attr)
    if isinstance(node, nodes.Getitem):
        owner = _walk_type(node.node, shadowed)
        return Any if owner is Any else item_type(owner)
    return Any


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


def explanation_problems(template: str) -> list[str]:
    """Everything wrong with a template before it renders: syntax, unknown names and fields."""
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
    for node in found:
        if isinstance(node, nodes.Getattr | nodes.Getitem):
            try:
                _walk_type(node, shadowed)
            except UnknownAttribute as exc:
                problems.append(f"template line {node.lineno}: {exc}")
    return list(dict.fromkeys(problems))
