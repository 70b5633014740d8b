"""The import rules of the house, read from the source with ``ast`` (nothing is imported).

Every ``import`` and ``from ... import`` of every module under app/ and simulator/ counts: at the
top, under ``if TYPE_CHECKING:``, inside a function. ``from P import n`` is an arrow to the module
``P.n`` when that file exists, else to ``P``. The implicit import of a parent package's
``__init__`` is not an arrow (every submodule would otherwise tie its package into a circle).

The rules:
- no circle of modules (a strongly connected component of more than one module, or a module that
  imports itself), and no circle of packages (``app.web`` <-> ``app.api``), in app/ or simulator/;
- the simulator never imports the app (data flows app -> simulator);
- inside the app, a module imports only from its own layer or a lower one: faces (web, API, CLI,
  middleware) -> domain (course, the check language, grading, instructor, progress...) ->
  persistence (database, tables, migrations) -> foundation (settings, errors, logs).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("app", "simulator")

FACE, DOMAIN, PERSISTENCE, FOUNDATION = "face", "domain", "persistence", "foundation"
RANK = {FACE: 3, DOMAIN: 2, PERSISTENCE: 1, FOUNDATION: 0}
"""A module may import a module of its own layer or of a lower rank, never a higher one."""

LAYERS = {
    "app.main": FACE,
    "app.cli": FACE,
    "app.deps": FACE,
    "app.web": FACE,
    "app.api": FACE,
    "app.commands": FACE,
    "app.middleware": FACE,
    "app.checks": DOMAIN,
    "app.course": DOMAIN,
    "app.grading": DOMAIN,
    "app.instructor": DOMAIN,
    "app.progress": DOMAIN,
    "app.step_runs": DOMAIN,
    "app.check_outcomes": DOMAIN,
    "app.export": DOMAIN,
    "app.accounts": DOMAIN,
    "app.session_state": DOMAIN,
    "app.designs": DOMAIN,
    "app.guest_work": DOMAIN,
    "app.simpool": DOMAIN,
    "app.sim_cache": DOMAIN,
    "app.sim_budget": DOMAIN,
    "app.poll_interval_floor": DOMAIN,
    "app.sim_backend": DOMAIN,
    "app.taskqueue": DOMAIN,
    "app.metrics": DOMAIN,
    "app.json_schemas": DOMAIN,
    "app.db": PERSISTENCE,
    "app.models": PERSISTENCE,
    "app.migrations": PERSISTENCE,
    "app": FOUNDATION,
    "app.settings": FOUNDATION,
    "app.roles": FOUNDATION,
    "app.development_secret": FOUNDATION,
    "app.errors": FOUNDATION,
    "app.logs": FOUNDATION,
    "app.control_characters": FOUNDATION,
}
"""The layer of every app module, by its module or package name (the longest prefix wins)."""


def module_name(path: Path) -> str:
    """``app/deps.py`` -> ``app.deps``; a package's ``__init__.py`` -> the package."""
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def module_files() -> dict[str, Path]:
    """Every module of PACKAGES by name."""
    return {
        module_name(path): path
        for package in PACKAGES
        for path in sorted((REPO / package).rglob("*.py"))
    }


def _imported_names(module: str, path: Path) -> Iterator[tuple[str, tuple[str, ...]]]:
    """(module imported from, names taken) of every import statement in the file, anywhere."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, ()
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                package = module.split(".")
                if not is_package:
                    package.pop()
                base = package[: len(package) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            yield target, tuple(alias.name for alias in node.names)


def _known(name: str) -> str | None:
    """The longest prefix of ``name`` that is a module of PACKAGES, or None (outside them)."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in module_files():
            return candidate
        parts.pop()
    return None


@cache
def import_graph() -> dict[str, frozenset[str]]:
    """Module -> the modules of PACKAGES it imports."""
    graph: dict[str, frozenset[str]] = {}
    for module, path in module_files().items():
        targets: set[str] = set()
        for source, names in _imported_names(module, path):
            submodules = [f"{source}.{n}" for n in names if f"{source}.{n}" in module_files()]
            targets.update(submodules)
            if len(submodules) < len(names) or not names:
                found = _known(source)
                if found is not None:
                    targets.add(found)
        graph[module] = frozenset(targets)
    return graph


def strongly_connected(graph: dict[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components of ``graph`` (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in graph.get(node, ()):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


def circles(graph: dict[str, Iterable[str]]) -> list[str]:
    """Each circle of ``graph`` with the arrows that tie it: ``a -> b, c`` a line."""
    found = []
    for component in strongly_connected(graph):
        members = set(component)
        self_loop = component[0] in graph.get(component[0], ())
        if len(component) > 1 or self_loop:
            arrows = [
                f"  {m} -> {', '.join(sorted(set(graph.get(m, ())) & members))}" for m in component
            ]
            found.append("\n".join([f"circle of {len(component)}:", *arrows]))
    return found


def within(package: str) -> dict[str, frozenset[str]]:
    """The import graph restricted to the modules of one top-level package."""
    inside = {m for m in import_graph() if m == package or m.startswith(package + ".")}
    return {m: import_graph()[m] & inside for m in inside}


def package_of(module: str) -> str:
    """The first two parts of a module's name: ``app.deps`` -> ``app.web``."""
    return ".".join(module.split(".")[:2])


def package_graph(package: str) -> dict[str, frozenset[str]]:
    """The graph of one top-level package with its subpackages and modules as nodes."""
    arrows: dict[str, set[str]] = {}
    for module, targets in within(package).items():
        node = package_of(module)
        arrows.setdefault(node, set()).update(package_of(t) for t in targets)
        arrows[node].discard(node)
    return {node: frozenset(targets) for node, targets in arrows.items()}


def layer_of(module: str) -> str | None:
    """The layer of an app module (LAYERS, longest prefix), or None when it has none."""
    parts = module.split(".")
    while len(parts) > 1 or module == "app":  # "app" names the package's own __init__ only
        layer = LAYERS.get(".".join(parts))
        if layer is not None:
            return layer
        parts.pop()
    return None


def test_the_graph_sees_imports_under_type_checking_and_inside_functions(tmp_path: Path) -> None:
    """The reader takes every import statement, wherever it stands, relative ones resolved."""
    source = tmp_path / "app" / "web" / "page.py"
    source.parent.mkdir(parents=True)
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from app.models import User\n"
        "def f():\n    import simulator.design\n"
        "from . import deps\nfrom ..grading import grader as g\n",
        encoding="utf-8",
    )
    found = list(_imported_names("app.web.page", source))
    assert ("app.models", ("User",)) in found
    assert ("simulator.design", ()) in found
    assert ("app.web", ("deps",)) in found
    assert ("app.grading", ("grader",)) in found


def test_a_circle_is_listed_with_its_arrows() -> None:
    """Two modules importing each other, or one importing itself, is a circle; a chain is not."""
    graph = {"a": ["b"], "b": ["a", "c"], "c": [], "d": ["d"]}
    assert circles(graph) == ["circle of 2:\n  a -> b\n  b -> a", "circle of 1:\n  d -> d"]
    assert circles({"a": ["b"], "b": ["c"], "c": []}) == []


@pytest.mark.parametrize("package", ["app", "simulator"])
def test_no_circle_of_modules(package: str) -> None:
    """No module of the package reaches itself through its imports."""
    assert within(package), f"no modules found under {package}/"
    found = circles(within(package))
    assert not found, "import circles:\n" + "\n".join(found)


@pytest.mark.parametrize("package", ["app", "simulator"])
def test_no_circle_of_packages(package: str) -> None:
    """No subpackage (or top-level module) of the package reaches itself through its imports."""
    found = circles(package_graph(package))
    assert not found, "import circles between packages:\n" + "\n".join(found)


def test_the_simulator_never_imports_the_app() -> None:
    """Data flows app -> simulator: no simulator module imports an app module."""
    upward = [
        f"{module} -> {target}"
        for module, targets in within("simulator").items()
        for target in sorted(targets)
        if target == "app" or target.startswith("app.")
    ]
    assert not upward, "simulator imports app:\n" + "\n".join(upward)


def reachable(graph: dict[str, frozenset[str]], start: Iterable[str]) -> set[str]:
    """Every module that importing the ``start`` modules loads, through any chain of imports."""
    seen: set[str] = set()
    todo = list(start)
    while todo:
        module = todo.pop()
        for target in graph.get(module, ()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


SIMULATOR_RULES = [
    # (whose imports, what they must never load, why)
    ("simulator.engine", ("simulator.faults", "simulator.simulation"), "the engine knows no fault"),
    (
        "simulator.engine",
        ("simulator.estimate",),
        "the simulation reads capacity and the workload from their own homes, not the estimate",
    ),
    ("simulator.faults", ("simulator.estimate",), "faults simulate; they do not estimate"),
    ("simulator.cost", ("simulator.estimate",), "the bill prices the run, not the estimate"),
]


@pytest.mark.parametrize("source, forbidden, why", SIMULATOR_RULES, ids=lambda r: str(r))
def test_the_simulator_s_rooms_import_one_way(
    source: str, forbidden: tuple[str, ...], why: str
) -> None:
    """Through any chain of imports (at the top, inside functions, under TYPE_CHECKING)."""
    graph = within("simulator")
    starts = [m for m in graph if m == source or m.startswith(source + ".")]
    assert starts, f"no module {source}"
    loaded = reachable(graph, starts)
    bad = sorted(m for m in loaded for f in forbidden if m == f or m.startswith(f + "."))
    assert not bad, f"{source} loads {bad}: {why}"


def test_every_app_module_has_a_layer() -> None:
    """A new module is placed in LAYERS, so the layer rule below covers it."""
    missing = [module for module in within("app") if layer_of(module) is None]
    assert not missing, f"add to LAYERS: {missing}"


def test_app_imports_point_down_the_layers() -> None:
    """Faces -> domain -> persistence -> foundation: the domain never imports a face, and so on."""
    upward = [
        f"{module} ({layer_of(module)}) -> {target} ({layer_of(target)})"
        for module, targets in within("app").items()
        for target in sorted(targets)
        if RANK[layer_of(target) or FACE] > RANK[layer_of(module) or FACE]
    ]
    assert not upward, "imports that run up the layers:\n" + "\n".join(upward)
