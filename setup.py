"""Build of designlab: the simulator's data plane compiled to C with mypyc, else pure Python.

Everything else about the distribution is in pyproject.toml. The modules in
:data:`COMPILED_MODULES` are compiled with mypyc (the same Python source, its type annotations
turned into C; no second implementation) into extension modules beside their ``.py`` files. The
build also writes ``simulator/_native.json``: each compiled module's source SHA-256, which
``simulator.native`` checks at import time, so a source edited after the build runs as Python
until the next build instead of running stale compiled code.

When the compiled build cannot be made (no C compiler, mypyc refuses a module) the build warns and
installs the pure-Python package, which gives byte-identical results, only slower.
``DESIGNLAB_PURE_PYTHON=1`` at build time skips the compiled build; at run time it makes the
simulator import its Python source even where the extensions exist.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent

# The module list and the manifest's name have one home, read here without importing the package
# (its __init__ would need the run-time dependencies).
NATIVE = runpy.run_path(str(ROOT / "simulator" / "native.py"))
COMPILED_MODULES: tuple[str, ...] = NATIVE["COMPILED_MODULES"]
GROUP_NAME: str = NATIVE["GROUP_NAME"]
MANIFEST = ROOT / "simulator" / NATIVE["MANIFEST_NAME"]

# Floating point exactly as Python computes it: no fused multiply-add (GCC contracts ``a * b + c``
# by default where the CPU has one, e.g. aarch64), no reassociation.
EXTRA_COMPILE_ARGS = ["-ffp-contract=off", "-fno-fast-math"]


def write_manifest() -> None:
    """``simulator/_native.json``: the source digest, size and mtime of every compiled module."""
    paths = {name: ROOT / (name.replace(".", "/") + ".py") for name in COMPILED_MODULES}
    modules = {name: NATIVE["source_digest"](path) for name, path in paths.items()}
    stat = {name: NATIVE["source_stat"](path) for name, path in paths.items()}
    manifest = {"group": GROUP_NAME, "modules": modules, "stat": stat}
    MANIFEST.write_text(json.dumps(manifest, indent=1) + "\n")


class OptionalBuildExt(build_ext):
    """``build_ext`` that falls back to pure Python when the C build fails, with a warning."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as error:  # any compiler failure: install pure Python
            self._fall_back(error)

    def build_extension(self, ext):  # type: ignore[no-untyped-def]
        try:
            super().build_extension(ext)
        except Exception as error:
            self._fall_back(error)

    def _fall_back(self, error: BaseException) -> None:
        self.extensions = []
        MANIFEST.unlink(missing_ok=True)
        print(
            f"WARNING: designlab's compiled simulator could not be built ({error}); "
            "installing the pure-Python simulator (identical results, slower)",
            file=sys.stderr,
        )


def compiled_extensions() -> list:  # type: ignore[type-arg]
    """The mypyc extensions, or none (pure Python) when asked or when mypyc cannot compile."""
    if os.environ.get("DESIGNLAB_PURE_PYTHON") == "1":
        MANIFEST.unlink(missing_ok=True)
        return []
    try:
        from mypyc.build import mypycify

        extensions = mypycify(
            [
                "--config-file",
                str(ROOT / "mypyc.ini"),
                *(m.replace(".", "/") + ".py" for m in COMPILED_MODULES),
            ],
            opt_level="3",
            group_name=GROUP_NAME,
        )
    except (SystemExit, Exception) as error:
        MANIFEST.unlink(missing_ok=True)
        print(
            f"WARNING: mypyc could not compile the simulator ({error!r}); installing the "
            "pure-Python simulator (identical results, slower)",
            file=sys.stderr,
        )
        return []
    for extension in extensions:
        extension.extra_compile_args = [*extension.extra_compile_args, *EXTRA_COMPILE_ARGS]
    write_manifest()
    return extensions


setup(ext_modules=compiled_extensions(), cmdclass={"build_ext": OptionalBuildExt})
