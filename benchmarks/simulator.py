"""Simulator speed: simulated step events per wall second, against a bare SimPy loop, and peak RSS.

Run: ``python benchmarks/simulator.py`` (one core is enough; nothing else should be running).
Prints one line per figure:

- (a) the worked sizing example (seed 000): 20 step events/s, 2.0 s constant steps, 48 partitions
  on 4 x 12, max.poll.records 50, commit after each batch, every agent worker down for 180 s;
- (b) 15 minutes at 500 step events/s with the course mix (20 model calls, 12 tool calls and 40
  state writes per run, lognormal and exponential step times, Poisson runs keyed by run id);
- (b causal) the load of (b) with runs as causal task graphs (``load.run_model: causal``, every
  course scenario's model: a step event is produced when the step before it is applied), the
  rate of the model the course runs;
- (c) the load of (b) with every fault kind of the faults layer (crash, provider outage, state
  failover, broker loss, rebalance, poison, sagas), to show the target holds with faults on;
- a bare SimPy loop (one process yielding ``env.timeout``) measured in the same run, and the
  ratio of (b) to it;
- the peers on one workload (benchmarks/queue_peers.py): a single M/M/c queue, the agent group
  alone, run by ours, by a naive SimPy model (a process per step event, a Resource per partition
  and one for the consumer's slots) and by Ciw, with step events per wall second for each, the
  ratios ours / naive and ours / Ciw, and each one's mean wait beside Erlang's C formula, to show
  the three simulate the same queue. Ciw is a benchmark extra (``pip install -e '.[bench]'``);
  without it its line says so and the rest still runs;
- the process's peak resident set size.

Each figure is the best of ``--repeat`` runs (default 3) of ``simulate`` end to end: workload
generation, the simulation and the result model. Target (issue 3): (b) >= 250,000 step events/s,
peak RSS <= 300 MB.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path

import simpy

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.queue_peers import (  # noqa: E402
    PeerRun,
    QueueWorkload,
    ciw_missing,
    run_ciw,
    run_naive_simpy,
    run_ours,
)
from simulator import simulate  # noqa: E402
from simulator.design import Design  # noqa: E402
from simulator.scenario import Scenario  # noqa: E402

WORKED_DESIGN = {
    "name": "worked sizing example",
    "event_log": {"partitions": 48, "partition_key": "event_id"},
    "delivery": {"commit": "after_processing", "dedupe": "durable_same_transaction"},
    "consumers": {
        "agent": {"instances": 4, "concurrency_per_instance": 12, "max_poll_records": 50}
    },
    "model": {"primary": {"rpm": 100_000, "tpm": 1_000_000_000, "max_concurrency": 1000}},
}
WORKED_SCENARIO = {
    "name": "worked-example",
    "duration_seconds": 1800,
    "deterministic": True,
    "load": {
        "runs_per_second": None,
        "step_events_per_second": 20,
        "step_time": {"agent_step": {"distribution": "constant", "mean_seconds": 2.0}},
    },
    "faults": [
        {"kind": "worker_crash", "at_seconds": 300, "duration_seconds": 180, "instances": "all"}
    ],
}

MIX_DESIGN = {
    "name": "500 step events/s",
    "event_log": {"partitions": 384, "partition_key": "run_id"},
    "delivery": {"commit": "after_processing", "dedupe": "durable_same_transaction"},
    "consumers": {
        "agent": {"instances": 32, "concurrency_per_instance": 12, "max_poll_records": 50},
        "tool": {"instances": 8, "concurrency_per_instance": 48, "max_poll_records": 100},
        "state": {"instances": 4, "concurrency_per_instance": 96, "max_poll_records": 500},
    },
    "orchestration": {"pattern": "orchestrator_worker", "max_subagents": 5},
    "model": {"primary": {"rpm": 12_000, "tpm": 20_000_000, "max_concurrency": 400}},
    "tools": {"runners": 16, "concurrency_per_runner": 4},
}
MIX_SCENARIO = {
    "name": "mix-500",
    "duration_seconds": 900,
    "load": {"runs_per_second": 500 / 72},
}

CAUSAL_SCENARIO = {
    **MIX_SCENARIO,
    "name": "mix-500-causal",
    "load": {"runs_per_second": 500 / 72, "run_model": "causal"},
}
"""(b causal): the (b) load as causal task graphs."""

FAULT_DESIGN = {
    **MIX_DESIGN,
    "name": "500 step events/s with faults",
    "model": {
        "primary": {"rpm": 12_000, "tpm": 20_000_000, "max_concurrency": 400},
        "fallback": {"enabled": True, "rpm": 12_000, "tpm": 20_000_000, "max_concurrency": 400},
        "circuit_breaker": {"enabled": True},
        "cache": {"enabled": True},
    },
    "state_store": {"replicas": 1, "failover": "automatic", "failover_seconds": 35},
    "failures": {
        "retry": {"max_attempts": 5, "max_backoff_seconds": 8, "jitter": "full"},
        "dead_letter_queue": {"enabled": True},
        "quarantine_per_key": True,
    },
    "tools": {
        "runners": 16,
        "concurrency_per_runner": 4,
        "saga": {"enabled": True, "compensation_order": "reverse"},
    },
}
FAULT_SCENARIO = {
    **MIX_SCENARIO,
    "name": "mix-500-faults",
    "faults": [
        {"kind": "worker_crash", "at_seconds": 120, "duration_seconds": 60, "instances": 4},
        {"kind": "provider_outage", "at_seconds": 300, "duration_seconds": 120},
        {"kind": "state_failover", "at_seconds": 450},
        {"kind": "broker_loss", "at_seconds": 600, "duration_seconds": 60},
        {"kind": "rebalance", "at_seconds": 700},
        {"kind": "poison", "rate": 0.0005},
        {"kind": "saga_failure"},
    ],
}
"""(c): the (b) load with every fault kind the faults layer simulates, one after another."""


def bare_simpy_rate(n: int = 1_000_000) -> tuple[float, float]:
    """Timeouts per wall second and per CPU second of one SimPy process yielding ``n`` timeouts."""
    env = simpy.Environment()

    def loop() -> simpy.events.ProcessGenerator:
        for _ in range(n):
            yield env.timeout(1.0)

    env.process(loop())
    wall, cpu = time.perf_counter(), time.process_time()
    env.run()
    return n / (time.perf_counter() - wall), n / (time.process_time() - cpu)


def events_per_second(design: Design, scenario: Scenario, repeat: int) -> tuple[float, float, int]:
    """Best step events per wall second and per CPU second over ``repeat`` runs, and the step
    events of one run. CPU seconds (this process only) show the rate a shared machine hides."""
    best_wall = best_cpu = 0.0
    events = 0
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        result = simulate(design, scenario, 1)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        events = result.metrics.arrivals
        best_wall = max(best_wall, events / wall)
        best_cpu = max(best_cpu, events / cpu)
    return best_wall, best_cpu, events


def best_peer_run(
    run: Callable[[QueueWorkload], PeerRun], workload: QueueWorkload, repeat: int
) -> PeerRun:
    """The fastest of ``repeat`` runs of one peer (the same seed: the same events and waits)."""
    return min((run(workload) for _ in range(repeat)), key=lambda r: r.wall_seconds)


def print_peers(workload: QueueWorkload, repeat: int) -> None:
    """The peers' lines: the workload, each peer's rate and mean wait, the ratios."""
    print(
        f"peers on one M/M/c queue (the agent group alone): {workload.arrivals_per_second:g} "
        f"step events/s Poisson, exponential service of mean "
        f"{workload.service_mean_seconds * 1000:g} ms, c = {workload.servers} servers "
        f"(utilisation {workload.utilisation:.3f}), {workload.partitions} partitions keyed by "
        f"event id, {workload.duration_seconds:g} s simulated, seed {workload.seed}; "
        f"Erlang C mean wait {workload.erlang_c_wait_seconds() * 1000:.2f} ms"
    )
    runs = [
        best_peer_run(run_ours, workload, repeat),
        best_peer_run(run_naive_simpy, workload, repeat),
    ]
    missing = ciw_missing()
    if missing is None:
        runs.append(best_peer_run(run_ciw, workload, repeat))
    for peer in runs:
        print(
            f"  {peer.name}: {peer.events_per_second:,.0f} step events/s "
            f"({peer.events_per_cpu_second:,.0f} per CPU second; {peer.events:,} step events "
            f"in {peer.wall_seconds:.2f} s), mean wait {peer.wait_mean_seconds * 1000:.2f} ms"
        )
    if missing is not None:
        print(f"  {missing}")
    ours = runs[0]
    ratios = [
        f"ours / {peer.name}: {ours.events_per_second / peer.events_per_second:.1f} "
        f"({ours.events_per_cpu_second / peer.events_per_cpu_second:.1f} in CPU time)"
        for peer in runs[1:]
    ]
    print("ratio " + "; ".join(ratios))


def main() -> None:
    """Print the benchmark lines."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--peer-seconds",
        type=float,
        default=QueueWorkload.duration_seconds,
        help="simulated seconds of the peers' M/M/c workload",
    )
    args = parser.parse_args()
    from simulator import native

    print(f"simulator build: {native.state().describe()}")
    worked_wall, worked_cpu, worked_n = events_per_second(
        Design.model_validate(WORKED_DESIGN), Scenario.model_validate(WORKED_SCENARIO), args.repeat
    )
    print(
        f"(a) worked example with 180 s outage: {worked_wall:,.0f} step events/s "
        f"({worked_cpu:,.0f} per CPU second; {worked_n:,} step events)"
    )
    mix_wall, mix_cpu, mix_n = events_per_second(
        Design.model_validate(MIX_DESIGN), Scenario.model_validate(MIX_SCENARIO), args.repeat
    )
    print(
        f"(b) 15 min at 500 step events/s, course mix: {mix_wall:,.0f} step events/s "
        f"({mix_cpu:,.0f} per CPU second; {mix_n:,} step events)"
    )
    causal_wall, causal_cpu, causal_n = events_per_second(
        Design.model_validate(MIX_DESIGN), Scenario.model_validate(CAUSAL_SCENARIO), args.repeat
    )
    print(
        f"(b causal) (b) as causal task graphs: {causal_wall:,.0f} step events/s "
        f"({causal_cpu:,.0f} per CPU second; {causal_n:,} step events)"
    )
    fault_wall, fault_cpu, fault_n = events_per_second(
        Design.model_validate(FAULT_DESIGN), Scenario.model_validate(FAULT_SCENARIO), args.repeat
    )
    print(
        f"(c) (b) with a crash, provider outage, failover, broker loss, rebalance, poison and "
        f"sagas: {fault_wall:,.0f} step events/s ({fault_cpu:,.0f} per CPU second; "
        f"{fault_n:,} step events)"
    )
    rates = [bare_simpy_rate() for _ in range(args.repeat)]
    bare_wall = max(r[0] for r in rates)
    bare_cpu = max(r[1] for r in rates)
    print(f"bare SimPy timeout loop: {bare_wall:,.0f} timeouts/s ({bare_cpu:,.0f} per CPU second)")
    print(
        f"ratio (b) / bare SimPy: {mix_wall / bare_wall:.2f} ({mix_cpu / bare_cpu:.2f} in CPU time)"
    )
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS: {rss_mb:,.0f} MB")
    print_peers(QueueWorkload(duration_seconds=args.peer_seconds), args.repeat)


if __name__ == "__main__":
    main()
