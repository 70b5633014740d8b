"""Grade the course's reference design end to end in a fresh process and print the cost.

Every step's checks and every scenario the steps name, simulated once each, nothing cached from
an earlier run: imports, the course folder and pricing catalog, the design file, the simulations
and the checks. Prints the wall time (with where it went), the CPU time (what the wall time is
on an idle core, when the machine is shared) and the peak resident set size.
Targets on one core here: <= 2 s and <= 200 MB.

Then the whole process, as a learner's CI runs it: ``designlab grade <reference> --format json``
started once with an empty ``TMPDIR`` (a machine's first grade: nothing in Jinja's cache of
compiled explanation templates), then ``--runs`` times (default 5) as a child process, each
one's wall time, CPU time (user + system) and peak RSS read from ``os.wait4``; the medians are
printed. Targets (issue 18): <= 1.0 s wall and <= 150 MB.

    .venv/bin/python benchmarks/grade.py [STEPS_DIR] [--runs N]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

# Run as a script, this folder comes first on sys.path, where benchmarks/simulator.py would
# shadow the simulator package: put the repository root there instead.
sys.path[0] = str(Path(__file__).resolve().parents[1])

TARGET_SECONDS = 2.0
TARGET_RSS_MB = 200.0
WHOLE_TARGET_SECONDS = 1.0
WHOLE_TARGET_RSS_MB = 150.0


@dataclass(frozen=True)
class ChildRun:
    """One ``designlab grade`` child process: wall seconds, CPU seconds (user + system), peak
    resident set size in MB (ru_maxrss, KiB on Linux) and its exit code."""

    wall_seconds: float
    cpu_seconds: float
    rss_mb: float
    exit_code: int


def designlab_command() -> list[str]:
    """The ``designlab`` console script beside this interpreter (the virtual environment's),
    else the one on PATH. Raises FileNotFoundError when there is none (not installed)."""
    beside = Path(sys.executable).with_name("designlab")
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("designlab")
    if found is None:
        raise FileNotFoundError("no designlab command: run `make setup` (pip install -e .)")
    return [found]


def grade_child(design: Path, steps_dir: Path, temp_dir: Path | None = None) -> ChildRun:
    """Run ``designlab grade DESIGN --format json --steps-dir STEPS_DIR`` once, output
    discarded, and measure that one child with ``os.wait4``. ``temp_dir``: the child's
    ``TMPDIR`` (an empty one: the first grade of a machine, no compiled template cached)."""
    argv = [*designlab_command(), "grade", str(design), "--format", "json"]
    argv += ["--steps-dir", str(steps_dir)]
    start = time.perf_counter()
    env = None if temp_dir is None else {**os.environ, "TMPDIR": str(temp_dir)}
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped here; Popen must not wait
    return ChildRun(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, child.returncode)


def whole_process(design: Path, steps_dir: Path, runs: int) -> list[ChildRun]:
    """``runs`` child processes of ``designlab grade``, one after another."""
    return [grade_child(design, steps_dir) for _ in range(runs)]


def main(steps_dir: Path, runs: int) -> None:
    """Run the benchmark against the course in ``steps_dir`` and print its lines."""
    start = time.perf_counter()
    cpu_start = time.process_time()
    from app.grading.grader import grade, load_material
    from simulator.files import load_design

    imported = time.perf_counter()
    material = load_material(steps_dir)
    design = load_design(steps_dir / material.course.reference_design)
    loaded = time.perf_counter()
    result = grade(design, material)
    graded = time.perf_counter()
    cpu = time.process_time() - cpu_start
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    from app.step_runs import wanted_runs

    # Every simulation the grade read: each step's design under each scenario it or its checks
    # name, and the design itself under the scenario its month is priced with.
    wanted = wanted_runs(design, material, material.loaded.steps)
    scenarios = sorted({name for _, name in wanted})
    total = graded - start
    print(
        f"grade reference: {total:.2f} s wall (imports {imported - start:.2f} s, course "
        f"{loaded - imported:.2f} s, {len(wanted)} simulations and "
        f"{sum(len(s.checks) for s in result.steps)} checks {graded - loaded:.2f} s); "
        f"target <= {TARGET_SECONDS:g} s"
    )
    print(f"grade reference: {cpu:.2f} CPU s (the wall time on an idle core)")
    print(f"peak RSS: {rss_mb:.0f} MB; target <= {TARGET_RSS_MB:g} MB")
    from simulator import native

    print(f"simulator build: {native.state().describe()}")
    print(
        f"result: {result.status} {result.points}/{result.max_points}; "
        f"scenarios: {', '.join(scenarios)}"
    )
    from benchmarks.simulator import bare_simpy_rate

    _, rate = bare_simpy_rate(300_000)
    print(
        f"machine speed now: {rate:,.0f} SimPy timeouts per CPU second (measured after the "
        "grade, as in benchmarks/simulator.py; it varies from run to run on a shared machine)"
    )
    design_file = steps_dir / material.course.reference_design
    with tempfile.TemporaryDirectory() as empty:
        first = grade_child(design_file, steps_dir, Path(empty))
    print(
        f"whole process, first grade on a machine (empty TMPDIR: the explanation templates "
        f"compiled, not read from Jinja's bytecode cache): {first.wall_seconds:.2f} s wall "
        f"({first.cpu_seconds:.2f} CPU s), peak RSS {first.rss_mb:.0f} MB"
    )
    children = whole_process(design_file, steps_dir, runs)
    failed = [c.exit_code for c in children if c.exit_code != 0]
    wall = statistics.median(c.wall_seconds for c in children)
    cpu = statistics.median(c.cpu_seconds for c in children)
    rss = statistics.median(c.rss_mb for c in children)
    print(
        f"whole process `designlab grade {design_file} --format json`, median of {runs}: "
        f"{wall:.2f} s wall ({cpu:.2f} CPU s), peak RSS {rss:.0f} MB; "
        f"target <= {WHOLE_TARGET_SECONDS:g} s and <= {WHOLE_TARGET_RSS_MB:g} MB"
        + (f"; exit codes {failed}, expected 0" if failed else "")
    )
    print(
        "  runs (wall s / CPU s / MB): "
        + ", ".join(f"{c.wall_seconds:.2f}/{c.cpu_seconds:.2f}/{c.rss_mb:.0f}" for c in children)
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("steps_dir", nargs="?", type=Path, default=Path("steps"))
    parser.add_argument("--runs", type=int, default=5, help="whole-process runs (median)")
    arguments = parser.parse_args()
    main(arguments.steps_dir, arguments.runs)
