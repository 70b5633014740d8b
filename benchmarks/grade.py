"""Grade the course's reference design end to end in a fresh process and print the cost.

Every step's checks and every scenario the steps name, simulated once each, nothing cached from
an earlier run: imports, the course folder and pricing catalog, the design file, the simulations
and the checks. Prints the wall time (with where it went), the CPU time (what the wall time is
on an idle core, when the machine is shared) and the peak resident set size.
Targets on one core here: <= 2 s and <= 200 MB.

    .venv/bin/python benchmarks/grade.py [STEPS_DIR]
"""

from __future__ import annotations

import resource
import sys
import time
from pathlib import Path

# Run as a script, this folder comes first on sys.path, where benchmarks/simulator.py would
# shadow the simulator package: put the repository root there instead.
sys.path[0] = str(Path(__file__).resolve().parents[1])

TARGET_SECONDS = 2.0
TARGET_RSS_MB = 200.0


def main(steps_dir: Path) -> None:
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
    scenarios = sorted({s.scenario for s in result.steps if s.scenario})
    total = graded - start
    print(
        f"grade reference: {total:.2f} s wall (imports {imported - start:.2f} s, course "
        f"{loaded - imported:.2f} s, {len(scenarios)} scenarios and "
        f"{sum(len(s.checks) for s in result.steps)} checks {graded - loaded:.2f} s); "
        f"target <= {TARGET_SECONDS:g} s"
    )
    print(f"grade reference: {cpu:.2f} CPU s (the wall time on an idle core)")
    print(f"peak RSS: {rss_mb:.0f} MB; target <= {TARGET_RSS_MB:g} MB")
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

if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("steps"))
