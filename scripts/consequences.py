"""Every decision the course teaches has a simulated consequence (steps/consequences.yaml).

For each decision, the course's reference design and the same design with the decision's wrong
value are simulated under the decision's scenario on every seed; the decision's metric must be
worse for the wrong design on every seed. Prints one line per decision with the metric's range
for each design, and exits 1 when any decision shows no consequence on some seed.

    .venv/bin/python scripts/consequences.py                 # seeds 1-20
    .venv/bin/python scripts/consequences.py --seeds 1 2 3   # a few
    .venv/bin/python scripts/consequences.py --decision delivery.dedupe

Exit codes: 0 every decision moves its metric on every seed, 1 one does not, 2 usage.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
STEPS = REPO / "steps"
TABLE = STEPS / "consequences.yaml"


@dataclass(frozen=True)
class Decision:
    """One row of steps/consequences.yaml: the wrong values (dotted design paths), the scenario,
    the metric (a key of the result's metrics, or ``by_group.<group>.<key>``) and which way is
    worse (``higher`` or ``lower``), by at least ``by_at_least`` (in the metric's unit). ``base``:
    values applied to both designs first, for a decision that matters only in another context
    (a token budget under uncapped peer agents). ``trade_off``: the row shows what the wrong
    value gains (the price of the right one), in the direction ``worse`` names."""

    decision: str
    step: str
    wrong: dict[str, Any]
    scenario: str
    metric: str
    worse: str
    by_at_least: float = 0.0
    base: dict[str, Any] | None = None
    trade_off: bool = False


def decisions(path: Path = TABLE) -> list[Decision]:
    """The table's decisions, in file order; raises ValueError naming a malformed entry."""
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    rows = []
    for i, entry in enumerate(raw["decisions"]):
        row = Decision(**entry)
        if row.worse not in ("higher", "lower"):
            raise ValueError(
                f"{path}: decision {i} ({row.decision}): worse must be higher or lower"
            )
        rows.append(row)
    return rows


def with_values(design: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of a design's mapping with each dotted path set to its value; raises KeyError
    for a path whose parent is not in the design."""
    import copy

    out = copy.deepcopy(design)
    for path, value in values.items():
        *parents, leaf = path.split(".")
        node = out
        for name in parents:
            node = node[name]
        node[leaf] = value
    return out


def metric_of(metrics: Any, name: str) -> float:
    """The named metric of a result's ``Metrics`` (``by_group.<group>.<key>`` reaches a group)."""
    if name.startswith("by_group."):
        _, group, key = name.split(".", 2)
        return float(getattr(metrics.by_group[group], key))
    value = getattr(metrics, name)
    return float("inf") if value is None else float(value)


@functools.lru_cache(maxsize=512)
def _metrics(design_json: str, scenario: str, seed: int) -> Any:
    """The metrics of one run (cached: rows sharing a base share the reference's runs)."""
    from simulator import simulate
    from simulator.design import Design
    from simulator.files import load_scenario

    design = Design.model_validate(json.loads(design_json))
    return simulate(design, load_scenario(STEPS / "scenarios" / f"{scenario}.yaml"), seed).metrics


def measure(decision: Decision, seed: int) -> tuple[float, float]:
    """The metric for the reference design and for the wrong design, at ``seed``."""
    reference = yaml.safe_load((STEPS / "designs" / "reference.yaml").read_text(encoding="utf-8"))
    reference = with_values(reference, decision.base or {})
    wrong = with_values(reference, decision.wrong)
    right_m = _metrics(json.dumps(reference, sort_keys=True), decision.scenario, seed)
    wrong_m = _metrics(json.dumps(wrong, sort_keys=True), decision.scenario, seed)
    return metric_of(right_m, decision.metric), metric_of(wrong_m, decision.metric)


def shows(decision: Decision, right: float, wrong: float) -> bool:
    """True when the wrong value's metric is worse than the reference's by the decision's margin."""
    if decision.worse == "higher":
        return wrong > right + decision.by_at_least
    return wrong < right - decision.by_at_least


def _job(args: tuple[Decision, int]) -> tuple[Decision, int, float, float]:
    decision, seed = args
    return (decision, seed, *measure(decision, seed))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(1, 21)))
    parser.add_argument("--decision", action="append", help="only these decisions")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    rows = [d for d in decisions() if not args.decision or d.decision in args.decision]
    if not rows:
        parser.error(f"no decision named {args.decision}")
    # Keyed by row: a decision may have several rows (each side of a trade-off).
    found: list[list[tuple[int, float, float]]] = [[] for _ in rows]
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        jobs = [(i, s) for i in range(len(rows)) for s in args.seeds]
        for (i, _), (_, seed, right, wrong) in zip(
            jobs, pool.map(_job, [(rows[i], s) for i, s in jobs]), strict=True
        ):
            found[i].append((seed, right, wrong))
    failing = 0
    for i, d in enumerate(rows):
        runs = found[i]
        missed = [seed for seed, right, wrong in runs if not shows(d, right, wrong)]
        failing += bool(missed)
        rights = [r for _, r, _ in runs]
        wrongs = [w for _, _, w in runs]
        verdict = "moves on every seed" if not missed else f"NO CONSEQUENCE at seeds {missed}"
        side = f"the wrong value's gain: {d.worse}" if d.trade_off else f"{d.worse} is worse"
        print(
            f"{d.decision:<34} {d.scenario:<16} {d.metric:<18} "
            f"reference {min(rights):g}..{max(rights):g}  "
            f"wrong {min(wrongs):g}..{max(wrongs):g}  ({side}): {verdict}"
        )
    print(
        f"{len(rows) - failing} of {len(rows)} decisions move their metric "
        f"on seeds {args.seeds[0]}-{args.seeds[-1]}"
    )
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
