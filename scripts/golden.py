"""The simulator's golden result set: every course design x every course scenario x seeds.

For each design under ``steps/designs`` (the reference and every known-bad design) and each
scenario under ``steps/scenarios``, with seeds 1-3, this writes one JSON line holding the
simulation result (``simulator.simulate``), its monthly cost priced with ``steps/pricing.yaml``
against the course budget, and the closed-form estimate (``simulator.estimate.estimate``) of the
same design and scenario. The set lives in ``tests/simulator/golden/`` as one gzip'd JSON-lines
file per design, so a change meant to keep results shows none and a change meant to alter them
shows its diff (``--diff``).

    .venv/bin/python scripts/golden.py            # compare with the stored set; exit 1 on a diff
    .venv/bin/python scripts/golden.py --write    # regenerate the stored set
    .venv/bin/python scripts/golden.py --diff     # compare, printing the changed keys per result
    .venv/bin/python scripts/golden.py --design reference --seeds 1   # a subset

Exit codes: 0 identical (or written), 1 a result differs or is missing, 2 usage.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
STEPS = REPO / "steps"
GOLDEN = REPO / "tests" / "simulator" / "golden"
SEEDS = (1, 2, 3)


def designs() -> list[Path]:
    """Every design file of the course: the reference, then the known-bad ones by name."""
    return [
        STEPS / "designs" / "reference.yaml",
        *sorted((STEPS / "designs" / "bad").glob("*.yaml")),
    ]


def scenarios() -> list[Path]:
    """Every scenario file of the course, by name."""
    return sorted((STEPS / "scenarios").glob("*.yaml"))


def golden_file(design: Path) -> Path:
    """Where one design's results are kept: ``tests/simulator/golden/<design stem>.jsonl.gz``."""
    return GOLDEN / f"{design.stem}.jsonl.gz"


def result_line(design_path: Path, scenario_path: Path, seed: int) -> str:
    """One result as a JSON line: key, simulation result, cost and estimate (sorted keys)."""
    import yaml

    from simulator import simulate
    from simulator.cost import monthly_cost
    from simulator.estimate import estimate
    from simulator.files import load_design, load_scenario
    from simulator.pricing import load_pricing

    design = load_design(design_path)
    scenario = load_scenario(scenario_path)
    pricing = load_pricing(STEPS / "pricing.yaml")
    budget = float(
        yaml.safe_load((STEPS / "course.yaml").read_text(encoding="utf-8"))["budget_usd"]
    )
    result = simulate(design, scenario, seed)
    cost = monthly_cost(design, scenario, pricing, budget_usd=budget, metrics=result.metrics)
    line = {
        "key": f"{design_path.stem}/{scenario_path.stem}/{seed}",
        "result": json.loads(result.model_dump_json()),
        "cost": json.loads(cost.model_dump_json()),
        "estimate": json.loads(estimate(design, scenario).model_dump_json()),
    }
    return json.dumps(line, sort_keys=True, separators=(",", ":"))


def _design_lines(args: tuple[Path, tuple[int, ...]]) -> tuple[Path, list[str]]:
    design, seeds = args
    return design, [result_line(design, s, seed) for s in scenarios() for seed in seeds]


def read_set(path: Path) -> dict[str, str]:
    """The stored lines of one golden file by key; empty when the file is missing."""
    if not path.is_file():
        return {}
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return {json.loads(line)["key"]: line.rstrip("\n") for line in f}


def _changed_paths(old: Any, new: Any, prefix: str = "") -> Iterator[str]:
    if isinstance(old, dict) and isinstance(new, dict):
        for k in sorted(set(old) | set(new)):
            yield from _changed_paths(old.get(k), new.get(k), f"{prefix}.{k}" if prefix else k)
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            yield from _changed_paths(a, b, f"{prefix}[{i}]")
    elif old != new:
        yield f"{prefix}: {json.dumps(old)[:80]} -> {json.dumps(new)[:80]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="regenerate the stored set")
    parser.add_argument("--diff", action="store_true", help="print what changed in each result")
    parser.add_argument("--design", action="append", help="only these design stems")
    parser.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS))
    parser.add_argument("--jobs", type=int, default=2, help="processes (default 2)")
    args = parser.parse_args(argv)
    chosen = [d for d in designs() if not args.design or d.stem in args.design]
    if not chosen:
        parser.error(f"no design named {args.design}")
    work = [(d, tuple(args.seeds)) for d in chosen]
    differing = 0
    total = 0
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for design, lines in pool.map(_design_lines, work):
            total += len(lines)
            if args.write:
                GOLDEN.mkdir(parents=True, exist_ok=True)
                with gzip.GzipFile(golden_file(design), "wb", mtime=0) as f:
                    f.write(("\n".join(lines) + "\n").encode("utf-8"))
                continue
            stored = read_set(golden_file(design))
            for line in lines:
                key = json.loads(line)["key"]
                if stored.get(key) == line:
                    continue
                differing += 1
                print(f"DIFFERS {key}" if key in stored else f"MISSING {key}")
                if args.diff and key in stored:
                    for change in _changed_paths(json.loads(stored[key]), json.loads(line)):
                        print(f"    {change}")
    if args.write:
        print(f"wrote {total} results for {len(chosen)} designs to {GOLDEN.relative_to(REPO)}")
        return 0
    print(f"{total - differing} of {total} results identical")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
