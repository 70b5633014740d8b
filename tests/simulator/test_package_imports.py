"""The simulator's imports run one way: the engine imports no fault, and no import circle exists.

Every import counts: at module level, inside a function, and under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "simulator"


def module_files() -> dict[str, Path]:
    """Every module of the simulator package by dotted name (a package by its own name)."""
    modules: dict[str, Path] = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def imported(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The simulator modules that module ``name`` (at ``path``) imports anywhere in its file."""
    out: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                if submodule in modules:
                    out.add(submodule)
                elif base in modules:
                    out.add(base)
    out.discard(name)
    return out


def import_graph() -> dict[str, set[str]]:
    """Module name -> the simulator modules it imports."""
    modules = module_files()
    return {name: imported(name, path, modules) for name, path in modules.items()}


def find_circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` as a path that ends where it starts, or None."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found is not None:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found is not None:
                return found
    return None


def test_the_engine_imports_no_fault_and_not_the_assembly() -> None:
    graph = import_graph()
    engine = {name: deps for name, deps in graph.items() if name.startswith("simulator.engine")}
    assert engine, "no engine modules found"
    offending = {
        name: sorted(
            d
            for d in deps
            if d.startswith("simulator.faults") or d in ("simulator.simulation", PACKAGE)
        )
        for name, deps in engine.items()
    }
    assert {name: deps for name, deps in offending.items() if deps} == {}


def test_no_import_circle_in_the_simulator() -> None:
    assert find_circle(import_graph()) is None


def test_the_circle_finder_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_circle(graph) == ["a", "b", "c", "a"]
    assert find_circle({"a": {"b"}, "b": set()}) is None
