"""The compiled data plane (simulator.native, setup.py): built by the set-up, same bytes as Python.

The set-up compiles the modules in ``COMPILED_MODULES`` with mypyc wherever a C compiler exists;
the suite runs on what it built. These tests check that the build did not fall back silently,
that the Python source of the same modules gives byte-identical results (the golden set, in a
subprocess with ``DESIGNLAB_PURE_PYTHON=1``), and that a stale or partial build is never imported.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from simulator import native

REPO = Path(__file__).resolve().parents[2]
SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]


def _pure_env() -> dict[str, str]:
    return {**os.environ, native.PURE_ENV: "1"}


def test_the_set_up_compiled_the_data_plane_where_a_c_compiler_exists():
    if os.environ.get(native.PURE_ENV) == "1":
        pytest.skip(f"{native.PURE_ENV}=1: the suite runs the Python source")
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler here: the set-up installs the pure-Python simulator")
    state = native.state()
    assert state.compiled, state.describe()
    for name in native.COMPILED_MODULES:
        module = importlib.import_module(name)
        assert module.__file__ is not None and module.__file__.endswith(SUFFIX), name


def test_pure_python_imports_every_module_from_its_source():
    code = (
        "import importlib, simulator\n"
        "from simulator import native\n"
        "print(native.state().describe())\n"
        "for n in native.COMPILED_MODULES:\n"
        "    print(importlib.import_module(n).__file__)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=_pure_env(), capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out[0] == f"pure Python ({native.PURE_ENV}=1)"
    assert len(out) == 1 + len(native.COMPILED_MODULES)
    assert all(line.endswith(".py") for line in out[1:]), out


def test_pure_python_gives_the_golden_bytes():
    """Seed 1 of every scenario for the reference and two bad designs (a provider outage without
    a fallback, retries without backoff), run as Python source, equals the stored set, which the
    compiled build reproduces in this process (test_golden_set.py)."""
    designs = ["reference", "no-fallback", "no-backoff"]
    run = subprocess.run(
        [sys.executable, "scripts/golden.py", "--seeds", "1", "--jobs", "2"]
        + [arg for design in designs for arg in ("--design", design)],
        cwd=REPO,
        env=_pure_env(),
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    count = len(list((REPO / "steps" / "scenarios").glob("*.yaml"))) * len(designs)
    assert f"{count} of {count} results identical" in run.stdout, run.stdout


def test_the_heap_shortcut_checks_pass_on_the_python_source():
    """tests/simulator/engine/test_heap_shortcuts.py wraps the data plane's methods, which only
    the Python source calls through the class; where the suite runs compiled, run it as source."""
    if not native.state().compiled:
        pytest.skip("the suite runs the Python source: the file runs in this process")
    path = "tests/simulator/engine/test_heap_shortcuts.py"
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", path],
        cwd=REPO,
        env=_pure_env(),
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and "skipped" not in run.stdout, run.stdout[-2000:]


def _fake_build(root: Path) -> None:
    """A tree under ``root`` holding the compiled modules' sources, an extension file for each
    and the group, and a manifest matching the sources."""
    modules, stat = {}, {}
    for name in native.COMPILED_MODULES:
        source = native.source_path(name, REPO)
        target = native.source_path(name, root)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        target.with_name(target.stem + SUFFIX).write_bytes(b"")
        modules[name] = hashlib.sha256(source.read_bytes()).hexdigest()
        stat[name] = native.source_stat(target)
    group = root.joinpath(*(native.GROUP_NAME + "__mypyc").split("."))
    group.with_name(group.name + SUFFIX).write_bytes(b"")
    manifest = root / "simulator" / native.MANIFEST_NAME
    manifest.write_text(json.dumps({"group": native.GROUP_NAME, "modules": modules, "stat": stat}))


def test_a_complete_build_matching_its_sources_is_compiled(tmp_path):
    _fake_build(tmp_path)
    assert native.inspect(tmp_path, environ={}) == native.NativeState(True, "")
    assert native.inspect(tmp_path, environ={native.PURE_ENV: "1"}).reason == (
        f"{native.PURE_ENV}=1"
    )


def test_a_source_edited_after_the_build_runs_as_python(tmp_path):
    _fake_build(tmp_path)
    edited = native.source_path("simulator.engine.provider", tmp_path)
    edited.write_text(edited.read_text() + "\n# edited\n")
    state = native.inspect(tmp_path, environ={})
    assert not state.compiled
    assert state.reason == "simulator/engine/provider.py changed since the build: run `make setup`"


def test_a_source_touched_but_unchanged_stays_compiled(tmp_path):
    _fake_build(tmp_path)
    touched = native.source_path("simulator.engine.group", tmp_path)
    os.utime(touched, ns=(1, 1))
    assert native.inspect(tmp_path, environ={}).compiled


def test_a_missing_extension_or_manifest_runs_as_python(tmp_path):
    _fake_build(tmp_path)
    (tmp_path / "simulator" / native.MANIFEST_NAME).unlink()
    assert (
        native.inspect(tmp_path, environ={}).reason == f"no build manifest ({native.MANIFEST_NAME})"
    )
    _fake_build(tmp_path)
    partition = native.source_path("simulator.engine.partition", tmp_path)
    partition.with_name(partition.stem + SUFFIX).unlink()
    assert native.inspect(tmp_path, environ={}).reason == "not compiled at install"


def test_the_finder_serves_sources_for_all_but_the_compiled_modules():
    finder = native.SourceFirst("simulator", native.COMPILED_MODULES, REPO)
    spec = finder.find_spec(
        "simulator.engine.eventlog"
    )  # not compiled: an old build's file is set aside
    assert spec is not None and spec.origin == str(REPO / "simulator" / "engine" / "eventlog.py")
    assert finder.find_spec("simulator.engine.group") is None  # compiled: the extension
    assert finder.find_spec("simulator.engine") is None  # a package: the usual finder
    assert finder.find_spec("simpy.core") is None
    pure = native.SourceFirst("simulator", (), REPO)
    spec = pure.find_spec("simulator.engine.group")
    assert spec is not None and spec.origin == str(REPO / "simulator" / "engine" / "group.py")


def test_an_extension_left_by_an_older_build_is_never_imported(tmp_path):
    """A module compiled by an older build and not by this one runs as its source: here an
    unloadable extension file beside a copy of the package's ``engine/eventlog.py``."""
    shutil.copytree(REPO / "simulator", tmp_path / "simulator")
    stray = native.source_path("simulator.engine.eventlog", tmp_path)
    stray.with_name(stray.stem + SUFFIX).write_bytes(b"not an extension")
    code = "import simulator.engine.eventlog as m\nprint(m.__file__)\n"
    run = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == str(stray), run.stdout
