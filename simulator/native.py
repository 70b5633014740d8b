"""Whether the simulator's data plane runs compiled (mypyc) or as its Python source.

The modules in :data:`COMPILED_MODULES` are compiled by the build (``setup.py``) into C extensions
beside their ``.py`` files, from that same source: there is no second implementation, and both
give byte-identical results (tests/simulator/test_native.py). Python imports an extension before
a source file of the same name, so :func:`select`, called once by ``simulator/__init__.py`` before
any of them is imported, decides which is imported:

- compiled, when every extension is there and the build's manifest (``_native.json``: each
  module's source SHA-256 at build time, with its size and modification time, which spare the
  hashing while they are unchanged) matches the sources now;
- the Python source, with the reason, when ``DESIGNLAB_PURE_PYTHON=1`` is set, when nothing was
  compiled (no C compiler at install: the build warned), or when a source changed since the build
  (a stale extension would run old code: it warns, and ``make setup`` builds again).

All or none: the compiled modules call each other's classes natively, so one stale module sends
every one of them to its source. Every other module of the package is always imported from its
source, so an extension an older build left for a module not compiled now is never loaded. This
module imports only the standard library (``setup.py`` reads
its constants without installing anything).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.abc import MetaPathFinder
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType

COMPILED_MODULES = (
    "simulator.engine.partition",
    "simulator.engine.samples",
    "simulator.engine.group",
    "simulator.engine.membership",
    "simulator.engine.retries",
    "simulator.engine.consumers",
    "simulator.engine.world",
    "simulator.engine.causal",
    "simulator.engine.outbox",
    "simulator.engine.provider",
    "simulator.engine.router",
    "simulator.engine.tools",
    "simulator.engine.statestore",
)
"""The data plane and what it calls per step event, compiled together as one mypyc group."""

GROUP_NAME = "simulator._native"
"""The compiled group's shared library: ``simulator/_native__mypyc.<abi>.so``."""

MANIFEST_NAME = "_native.json"
"""The build's manifest, in the ``simulator`` package: ``{"group", "modules": {name: sha256},
"stat": {name: [size bytes, mtime ns]}}``."""

PURE_ENV = "DESIGNLAB_PURE_PYTHON"
"""Set to ``1``: import the Python source even where the compiled extensions exist."""

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_DIR = PACKAGE_DIR.parent


@dataclass(frozen=True)
class NativeState:
    """What :func:`select` chose: ``compiled`` True when the compiled extensions are imported;
    ``reason``: why not (empty when compiled)."""

    compiled: bool
    reason: str

    def describe(self) -> str:
        """One line for ``designlab --version`` and the benchmarks: ``compiled (mypyc)`` or
        ``pure Python (<reason>)``."""
        return "compiled (mypyc)" if self.compiled else f"pure Python ({self.reason})"


class SourceFirst(MetaPathFinder):
    """Finds every module under package ``package`` (dotted) except ``compiled`` as its ``.py``
    source under ``root``, never as an extension: an extension left by an older build (a module
    compiled then, not now) is never imported."""

    def __init__(self, package: str, compiled: Sequence[str], root: Path):
        self.prefix = package + "."
        self.compiled = frozenset(compiled)
        self.root = root

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> ModuleSpec | None:
        """The source file's spec for a module of the package not in ``compiled`` that has a
        ``.py`` file, else None (the next finder: packages, compiled modules, the rest)."""
        if not fullname.startswith(self.prefix) or fullname in self.compiled:
            return None
        source = source_path(fullname, self.root)
        if not source.is_file():
            return None
        return importlib.util.spec_from_file_location(fullname, source)


def source_path(name: str, root: Path = REPO_DIR) -> Path:
    """The ``.py`` file of module ``name`` (dotted) under ``root``."""
    return root.joinpath(*name.split(".")).with_suffix(".py")


def source_stat(path: Path) -> list[int]:
    """``[size in bytes, modification time in ns]`` of a source file, as the manifest keeps it."""
    info = path.stat()
    return [info.st_size, info.st_mtime_ns]


def source_digest(path: Path) -> str:
    """SHA-256 (hex) of a source file's bytes."""
    import hashlib  # only when a file's size or mtime changed since the build

    return hashlib.sha256(path.read_bytes()).hexdigest()


def extension_present(name: str, root: Path = REPO_DIR) -> bool:
    """True when an extension module file for ``name`` (dotted) exists under ``root``."""
    base = root.joinpath(*name.split("."))
    return any(
        base.with_name(base.name + suffix).is_file()
        for suffix in importlib.machinery.EXTENSION_SUFFIXES
    )


def inspect(root: Path = REPO_DIR, environ: dict[str, str] | None = None) -> NativeState:
    """Which the build under ``root`` allows: compiled, or the Python source and why (the rules
    in the module docstring). Reads files only; imports nothing."""
    env = os.environ if environ is None else environ
    if env.get(PURE_ENV) == "1":
        return NativeState(False, f"{PURE_ENV}=1")
    names = (*COMPILED_MODULES, GROUP_NAME + "__mypyc")
    if not all(extension_present(name, root) for name in names):
        return NativeState(False, "not compiled at install")
    manifest = root / "simulator" / MANIFEST_NAME
    try:
        content = json.loads(manifest.read_text())
        built, stats = content["modules"], content.get("stat", {})
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return NativeState(False, f"no build manifest ({MANIFEST_NAME})")
    for name in COMPILED_MODULES:
        if stats.get(name) == source_stat(source_path(name, root)):
            continue  # size and mtime as at the build: the same bytes
        if built.get(name) != source_digest(source_path(name, root)):
            where = source_path(name, root).relative_to(root)
            return NativeState(False, f"{where} changed since the build: run `make setup`")
    return NativeState(True, "")


_STATE: NativeState | None = None


def select() -> NativeState:
    """Decide once per process (before any compiled module is imported) which is imported; later
    calls return the same choice. Warns when stale extensions are set aside."""
    global _STATE
    if _STATE is not None:
        return _STATE
    state = inspect()
    compiled = COMPILED_MODULES if state.compiled else ()
    if not state.compiled:
        loaded = [name for name in COMPILED_MODULES if name in sys.modules]
        if loaded:
            raise RuntimeError(f"simulator.native.select() ran after {loaded[0]} was imported")
    sys.meta_path.insert(0, SourceFirst("simulator", compiled, REPO_DIR))
    if "changed since the build" in state.reason:
        warnings.warn(
            f"the compiled simulator is stale ({state.reason}); running its Python source",
            RuntimeWarning,
            stacklevel=2,
        )
    _STATE = state
    return state


def state() -> NativeState:
    """The choice :func:`select` made (making it now if it has not been made)."""
    return select()
