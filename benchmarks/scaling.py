"""How the simulator's run time grows: against partitions, load and simulated duration.

Run: ``.venv/bin/python benchmarks/scaling.py [--repeat 3]`` (one core; nothing else running).
Prints three tables of CPU seconds per run (the best of ``--repeat``), the step events simulated
and the microseconds per step event, for causal runs (every course scenario's run model) of the
course's run shape and the reference design's settings:

- partitions 12 .. 4,096 at the course's peak (0.5 runs/s, 36 step events/s), 480 s;
- load 10 .. 2,000 step events/s, 480 s, the design scaled with the load (partitions, instances,
  model limits, runners and state-store writes in proportion, so utilisation stays near the
  reference's);
- duration 480 s .. 4 h at the peak;
- rebalance storms: the course's ``replay`` scenario (a 48-hour pause, then a backlog of 129,000
  events) with every consumer group at a size (partitions, instances, slots per instance) and the
  agent group at a ``max.poll.interval.ms`` (as step 9's form sets it; None in :data:`STORMS`: the
  shortest the form accepts at that size, app.poll_interval_floor), where kicked members
  rejoin over and over: CPU seconds (one run; at most ``--storm-limit`` seconds, else "over"),
  the rebalances and the microseconds per rebalance.

A term worse than n log n in events would show as microseconds per event that grow with the
events; the per-partition terms (samples of every partition's lag, the assignment) as time that
grows with partitions at a fixed load. docs/simulator-model.md ("Run time and how it scales")
quotes the table.
"""

from __future__ import annotations

import argparse
import copy
import signal
import sys
import time
from pathlib import Path
from typing import Any

import yaml

sys.path[0] = str(Path(__file__).resolve().parents[1])

from app.poll_interval_floor import shortest_poll_interval_ms  # noqa: E402
from simulator import native, simulate  # noqa: E402
from simulator.design import Design  # noqa: E402
from simulator.scenario import Scenario  # noqa: E402

STEPS = Path(__file__).resolve().parents[1] / "steps"
EVENTS_PER_RUN = 72
"""Step events of the course's run (20 model calls, 12 tool calls, 40 state writes)."""


def _reference() -> dict[str, Any]:
    data = yaml.safe_load((STEPS / "designs" / "reference.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _peak() -> dict[str, Any]:
    data = yaml.safe_load((STEPS / "scenarios" / "peak.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def scaled(design: dict[str, Any], factor: float) -> dict[str, Any]:
    """The reference scaled for ``factor`` times the peak's load: partitions, instances, model
    limits, tool runners and state-store write capacity in proportion (bounds of the design
    model respected)."""
    d = copy.deepcopy(design)

    def up(x: float, hi: int) -> int:
        return max(1, min(hi, int(round(x * factor))))

    d["event_log"]["partitions"] = up(d["event_log"]["partitions"], 4096)
    for group in d["consumers"].values():
        group["instances"] = up(group["instances"], 1024)
    primary = d["model"]["primary"]
    for key in ("rpm", "tpm", "max_concurrency"):
        primary[key] = int(round(primary[key] * max(1.0, factor)))
    d["tools"]["runners"] = up(d["tools"]["runners"], 10_000)
    store = d["state_store"]
    store["write_capacity_per_second"] = int(store["write_capacity_per_second"] * max(1.0, factor))
    return d


def cpu_seconds(design: dict[str, Any], scenario: dict[str, Any], repeat: int) -> tuple[float, int]:
    """Best CPU seconds of ``simulate`` over ``repeat`` runs (seed 1) and the step events."""
    d = Design.model_validate(design)
    s = Scenario.model_validate(scenario)
    best, events = float("inf"), 0
    for _ in range(repeat):
        t = time.process_time()
        result = simulate(d, s, 1)
        best = min(best, time.process_time() - t)
        events = result.metrics.arrivals
    return best, events


def row(label: str, seconds: float, events: int) -> str:
    per = seconds / events * 1e6 if events else float("nan")
    return f"| {label} | {events:,} | {seconds:.3f} | {per:.1f} |"


STORMS: tuple[tuple[int, int | None, int | None, int | None], ...] = (
    (96, None, None, 1_000),
    (256, 256, 256, 300_000),
    (512, 512, 512, 300_000),
    (1024, 1024, 1024, 300_000),
    (4096, 1024, 1024, 300_000),
    (111, None, None, None),
    (4096, None, None, None),
    (96, 1024, 1024, None),
    (1024, 1024, 1024, None),
    (4096, 1024, 1024, None),
    (3072, 512, 1, None),
    (4096, 1024, 1, None),
)
"""Rebalance storms: (partitions, instances and slots per instance of every group, or None for
the reference's, the agent group's max.poll.interval.ms, or None for the shortest the form
accepts at that size: app.poll_interval_floor)."""


class _Over(Exception):
    """A storm run went past its limit."""


def storm_row(
    reference: dict[str, Any], case: tuple[int, int | None, int | None, int | None], limit_s: int
) -> str:
    """One storm case of :data:`STORMS` on the replay scenario (seed 1), stopped after
    ``limit_s`` seconds of wall time."""
    partitions, instances, slots, interval = case
    d = copy.deepcopy(reference)
    agent_instances = d["consumers"]["agent"]["instances"] if instances is None else instances
    shortest = interval is None
    interval_ms = shortest_poll_interval_ms(partitions, agent_instances) if shortest else interval
    d["event_log"]["partitions"] = partitions
    for group in d["consumers"].values():
        if instances is not None:
            group["instances"] = instances
            group["concurrency_per_instance"] = slots
    d["consumers"]["agent"]["max_poll_interval_ms"] = interval_ms
    shape = "reference groups" if instances is None else f"{instances:,} x {slots:,}"
    at = " (form's shortest)" if shortest else ""
    label = f"{partitions:,} | {shape} | {interval_ms / 1000:,.0f} s{at}"
    scenario = yaml.safe_load((STEPS / "scenarios" / "replay.yaml").read_text(encoding="utf-8"))

    def over(_signum: int, _frame: object) -> None:
        raise _Over

    previous = signal.signal(signal.SIGALRM, over)
    signal.alarm(limit_s)
    t = time.process_time()
    try:
        result = simulate(Design.model_validate(d), Scenario.model_validate(scenario), 1)
    except _Over:
        return f"| {label} | over {limit_s} s | | |"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    seconds = time.process_time() - t
    rebalances = result.metrics.rebalances
    per = seconds / rebalances * 1e6 if rebalances else float("nan")
    return f"| {label} | {seconds:.2f} | {rebalances:,} | {per:,.0f} |"


def main() -> None:
    """Print the four tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--storm-limit", type=int, default=60, help="seconds per storm run")
    parser.add_argument("--storms-only", action="store_true", help="print only the storm table")
    args = parser.parse_args()
    reference, peak = _reference(), _peak()
    peak["faults"] = []
    peak["duration_seconds"] = 480
    header = "| {} | step events | CPU s | us per event |\n| --- | --- | --- | --- |"
    print(f"simulator build: {native.state().describe()}\n")
    if args.storms_only:
        storm_table(reference, args.storm_limit)
        return

    print(header.format("partitions (peak, 480 s)"))
    for partitions in (12, 48, 96, 384, 1024, 4096):
        d = copy.deepcopy(reference)
        d["event_log"]["partitions"] = partitions
        print(row(f"{partitions:,}", *cpu_seconds(d, peak, args.repeat)))

    print()
    print(header.format("step events/s (480 s)"))
    base_eps = peak["load"]["runs_per_second"] * EVENTS_PER_RUN
    for eps in (10, 36, 100, 500, 1000, 2000):
        s = copy.deepcopy(peak)
        s["load"]["runs_per_second"] = eps / EVENTS_PER_RUN
        print(row(f"{eps:,}", *cpu_seconds(scaled(reference, eps / base_eps), s, args.repeat)))

    print()
    print(header.format("duration (peak)"))
    for seconds in (480, 1800, 3600, 14_400):
        s = copy.deepcopy(peak)
        s["duration_seconds"] = seconds
        label = f"{seconds:,} s"
        print(row(label, *cpu_seconds(reference, s, max(1, args.repeat if seconds <= 3600 else 1))))

    print()
    storm_table(reference, args.storm_limit)


def storm_table(reference: dict[str, Any], limit_s: int) -> None:
    """Print the rebalance storms' table (:data:`STORMS`)."""
    columns = ("partitions", "instances x slots", "agent max.poll.interval", "CPU s", "rebalances")
    print("| " + " | ".join(columns) + " | us each |")
    print("| --- | --- | --- | --- | --- | --- |")
    for case in STORMS:
        print(storm_row(reference, case, limit_s), flush=True)


if __name__ == "__main__":
    main()
