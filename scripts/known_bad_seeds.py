"""The course self-test on many seeds: the reference passes and every known-bad design fails
exactly its listed checks, per seed.

Run: ``.venv/bin/python scripts/known_bad_seeds.py [--seeds 1 ... 20] [--jobs 2]``. Prints one
line per design that strayed on some seed (the checks it failed or passed unexpectedly, and on
which seeds), then a summary line. Exit code 1 when any design strayed. The test suite's
self-test runs each scenario's own seed; this is the long sweep.
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

STEPS = Path(__file__).resolve().parent.parent / "steps"


def _grade_seed(seed: int) -> list[tuple[str, int, frozenset[str]]]:
    """Every design of the course graded at ``seed``, the runs designs share simulated once
    (``app.grading.selftest.shared_runs``): one job per seed."""
    from app.grading.grader import grade, load_material
    from app.grading.selftest import failed_checks, shared_runs
    from simulator.files import load_design

    material = load_material(STEPS)
    course = material.course
    simulate = shared_runs()
    out = []
    unjudged = {bad.file: frozenset(bad.unjudged) for bad in course.known_bad}
    for file in [course.reference_design, *(bad.file for bad in course.known_bad)]:
        result = grade(load_design(STEPS / file), material, seed=seed, simulate=simulate)
        failed = failed_checks(result, set(), unjudged.get(file, frozenset()))
        out.append((file, seed, failed))
    return out


def main(argv: list[str] | None = None) -> int:
    from app.grading.grader import load_material

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(1, 21)))
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    course = load_material(STEPS).course
    expected = {course.reference_design: frozenset()}
    expected.update({bad.file: frozenset(bad.fails) for bad in course.known_bad})
    work = [(f, s) for f in expected for s in args.seeds]
    strays: dict[str, dict[str, list[int]]] = {}
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        graded = (row for rows in pool.map(_grade_seed, args.seeds) for row in rows)
        for file, seed, failed in graded:
            for check in failed ^ expected[file]:
                how = "also failed" if check in failed else "passed"
                strays.setdefault(file, {}).setdefault(f"{how} {check}", []).append(seed)
    for file, items in strays.items():
        for what, seeds in sorted(items.items()):
            print(f"{file}: {what} at seeds {sorted(seeds)}")
    print(
        f"{len(work)} gradings of {len(expected)} designs on {len(args.seeds)} seeds: "
        f"{len(expected) - len(strays)} designs exactly as intended on every seed"
    )
    return 1 if strays else 0


if __name__ == "__main__":
    raise SystemExit(main())
