"""The causal run model's lessons on many seeds: what each decision does to a run, per seed.

Run: ``.venv/bin/python scripts/causal_runs.py [--seeds 1 2 ... 20] [--jobs 2]``. For each seed it
simulates the peak load (0.5 runs/s, 400 s) as causal runs (``load.run_model: causal``) under the
reference design and one change at a time, and prints the figures each lesson reads:

- partition key: run latency p50 (run id serialises a run's research on one partition) and order
  violations per run and per agent task;
- orchestration: run latency p50 and tokens (single agent), model calls (uncapped peers, a cap, a
  token budget);
- a worker crash under auto commit against commit after processing: events lost and runs stalled.

The last line says on how many seeds every lesson held (the direction the course teaches). The
tests (tests/simulator/test_causal_runs.py) check seeds 1-3 of the same lessons.
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.simulator.test_causal_runs import CRASH, causal_peak, metrics, reference  # noqa: E402


def one_seed(seed: int) -> tuple[int, list[str], bool]:
    """The figures of one seed, as printable lines, and whether every lesson held."""
    peak = causal_peak()
    task = {"event_log.partition_key": "task_id"}
    run_key = metrics(reference(**{"event_log.partition_key": "run_id"}), peak, seed)
    task_key = metrics(reference(**task), peak, seed)
    event_key = metrics(reference(**{"event_log.partition_key": "event_id"}), peak, seed)
    single = metrics(reference(**task, **{"orchestration.pattern": "single_agent"}), peak, seed)
    peers = {**task, "orchestration.pattern": "peer_agents"}
    capped = metrics(reference(**peers, **{"orchestration.token_budget_per_run": None}), peak, seed)
    uncapped = metrics(
        reference(
            **peers,
            **{"orchestration.max_subagents": None, "orchestration.token_budget_per_run": None},
        ),
        peak,
        seed,
    )
    budget = metrics(reference(**peers, **{"orchestration.max_subagents": None}), peak, seed)
    crash = causal_peak(400.0, faults=[CRASH])
    after = metrics(reference(**task), crash, seed)
    auto = metrics(
        reference(**task, **{"delivery.commit": "auto", "delivery.auto_commit_interval_ms": 100}),
        crash,
        seed,
    )
    lines = [
        f"seed {seed}: key run_id p50 {run_key.run_latency_p50_s} s (order/run "
        f"{run_key.order_violations_run}), task_id p50 {task_key.run_latency_p50_s} s (order/task "
        f"{task_key.order_violations_task}, order/run {task_key.order_violations_run}), event_id "
        f"order/task {event_key.order_violations_task}",
        f"  single agent p50 {single.run_latency_p50_s} s, {single.tokens:,} tokens against "
        f"{task_key.run_latency_p50_s} s, {task_key.tokens:,}; peers model calls capped "
        f"{capped.model_calls}, uncapped {uncapped.model_calls}, budget {budget.model_calls}",
        f"  crash: commit after processing lost {after.lost}, stalled {after.runs_stalled}; auto "
        f"commit lost {auto.lost}, stalled {auto.runs_stalled}",
    ]
    held = bool(
        run_key.run_latency_p50_s
        and task_key.run_latency_p50_s
        and run_key.run_latency_p50_s > 1.3 * task_key.run_latency_p50_s
        and run_key.order_violations_run == 0
        and task_key.order_violations_task == 0
        and (event_key.order_violations_task or 0) > 0
        and single.run_latency_p50_s
        and single.run_latency_p50_s > 1.5 * task_key.run_latency_p50_s
        and single.tokens < 0.5 * task_key.tokens
        and uncapped.model_calls > 1.8 * capped.model_calls
        and capped.model_calls < budget.model_calls < uncapped.model_calls
        and after.lost == 0
        and auto.lost > 0
        and (auto.runs_stalled or 0) > (after.runs_stalled or 0)
    )
    return seed, lines, held


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(1, 21)))
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    held = 0
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for _seed, lines, ok in pool.map(one_seed, args.seeds):
            print("\n".join(lines), flush=True)
            held += ok
    print(f"every lesson held on {held} of {len(args.seeds)} seeds")
    return 0 if held == len(args.seeds) else 1


if __name__ == "__main__":
    raise SystemExit(main())
