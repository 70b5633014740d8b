"""The simulator's peers on one workload: a naive SimPy model and Ciw, against ours.

The workload is a single M/M/c queue, the agent group alone: Poisson arrivals at
``arrivals_per_second``, exponential service of mean ``service_mean_seconds``, ``servers``
servers, first come first served, for ``duration_seconds`` of simulated time. Each peer reports
how many step events arrived, the wall and CPU seconds it took (building the model, the run and
reading the mean wait back; CPU seconds of this process show the rate a shared machine hides)
and the mean wait (arrival to start of service) of the events served, which Erlang's C formula
gives in closed form for the steady state, so that the three can be checked to simulate the
same queue before their speeds are compared.

- **ours**: ``simulator.simulate`` on a design with one agent instance of ``servers`` slots,
  ``partitions`` partitions keyed by event id and one record per poll (a slot serves one event,
  as a server does); the model provider has no binding limit. Event-id keys go round robin
  (simulator.engine.eventlog), so two events share a partition only ``partitions`` arrivals
  apart, long after the first has finished: per-partition order costs no wait and the group is
  the M/M/c queue.
- **naive SimPy**: the textbook model of the same group: a SimPy process per step event, a
  ``simpy.Resource`` of capacity 1 per partition (per-key order; events go round robin, as
  ours) and one of capacity ``servers`` for the consumer's slots; each event holds its
  partition while it waits for a slot.
- **Ciw** (https://ciw.readthedocs.io): ``ciw.create_network`` with one node of ``servers``
  servers. A benchmark dependency only: ``pip install -e '.[bench]'``.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass
from typing import Any

import simpy

from simulator import simulate
from simulator.design import Design
from simulator.scenario import Scenario


@dataclass(frozen=True)
class QueueWorkload:
    """One M/M/c queue: rates per second, times in seconds."""

    arrivals_per_second: float = 500.0
    service_mean_seconds: float = 0.056
    servers: int = 32
    partitions: int = 1024
    duration_seconds: float = 300.0
    seed: int = 1

    @property
    def utilisation(self) -> float:
        """rho = lambda / (c mu)."""
        return self.arrivals_per_second * self.service_mean_seconds / self.servers

    def erlang_c_wait_seconds(self) -> float:
        """The steady-state mean wait in queue, W_q = C(c, a) / (c mu - lambda), with Erlang's C
        formula C(c, a) = (a^c / c!) / (1 - rho) / (sum_{k<c} a^k / k! + (a^c / c!) / (1 - rho)),
        a = lambda / mu (Kleinrock, Queueing Systems vol. 1, section 3.5). Raises
        ZeroDivisionError when rho >= 1 (no steady state)."""
        mu = 1 / self.service_mean_seconds
        offered = self.arrivals_per_second / mu
        rho = self.utilisation
        if rho >= 1:
            raise ZeroDivisionError(f"utilisation {rho:.2f} >= 1: the queue has no steady state")
        term, total = 1.0, 0.0  # a^k / k!, summed for k < c
        for k in range(self.servers):
            total += term
            term *= offered / (k + 1)
        waiting = term / (1 - rho)
        probability = waiting / (total + waiting)
        return probability / (self.servers * mu - self.arrivals_per_second)


@dataclass(frozen=True)
class PeerRun:
    """One peer's run: step events arrived, wall and CPU seconds, mean wait of the served (s)."""

    name: str
    events: int
    wall_seconds: float
    cpu_seconds: float
    wait_mean_seconds: float

    @property
    def events_per_second(self) -> float:
        """Step events arrived per wall second."""
        return self.events / self.wall_seconds

    @property
    def events_per_cpu_second(self) -> float:
        """Step events arrived per CPU second of this process."""
        return self.events / self.cpu_seconds


class _Clock:
    """Wall and CPU seconds since it was made."""

    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def read(self) -> tuple[float, float]:
        """(wall seconds, CPU seconds) elapsed."""
        return time.perf_counter() - self.wall, time.process_time() - self.cpu


def run_ours(workload: QueueWorkload) -> PeerRun:
    """The workload on designlab's simulator (models built and validated inside the timing)."""
    clock = _Clock()
    design = Design.model_validate(
        {
            "name": "M/M/c agent group",
            "event_log": {"partitions": workload.partitions, "partition_key": "event_id"},
            "delivery": {"commit": "after_processing", "dedupe": "durable_same_transaction"},
            "consumers": {
                "agent": {
                    "instances": 1,
                    "concurrency_per_instance": workload.servers,
                    "max_poll_records": 1,
                }
            },
            "model": {
                "primary": {"rpm": 10_000_000, "tpm": 10_000_000_000, "max_concurrency": 100_000}
            },
        }
    )
    scenario = Scenario.model_validate(
        {
            "name": "m-m-c",
            "duration_seconds": workload.duration_seconds,
            "load": {
                "runs_per_second": None,
                "step_events_per_second": workload.arrivals_per_second,
                "step_time": {
                    "agent_step": {
                        "distribution": "exponential",
                        "mean_seconds": workload.service_mean_seconds,
                    }
                },
            },
        }
    )
    result = simulate(design, scenario, workload.seed)
    wall, cpu = clock.read()
    metrics = result.metrics
    return PeerRun("ours", metrics.arrivals, wall, cpu, metrics.wait_mean_s)


def run_naive_simpy(workload: QueueWorkload) -> PeerRun:
    """The textbook SimPy model: a process per step event, a Resource per partition and one
    for the consumer's slots."""
    clock = _Clock()
    rng = random.Random(workload.seed)
    env = simpy.Environment()
    partitions = [simpy.Resource(env, capacity=1) for _ in range(workload.partitions)]
    slots = simpy.Resource(env, capacity=workload.servers)
    waits: list[float] = []
    arrived = 0

    def step_event(partition: simpy.Resource) -> Any:
        arrival = env.now
        with partition.request() as in_order:
            yield in_order
            with slots.request() as slot:
                yield slot
                waits.append(env.now - arrival)
                yield env.timeout(rng.expovariate(1 / workload.service_mean_seconds))

    def arrivals() -> Any:
        nonlocal arrived
        while True:
            yield env.timeout(rng.expovariate(workload.arrivals_per_second))
            env.process(step_event(partitions[arrived % workload.partitions]))
            arrived += 1

    env.process(arrivals())
    env.run(until=workload.duration_seconds)
    wall, cpu = clock.read()
    return PeerRun("naive SimPy", arrived, wall, cpu, math.fsum(waits) / len(waits))


def ciw_missing() -> str | None:
    """None when Ciw imports, else the line that says how to install it."""
    try:
        import ciw  # noqa: F401
    except ImportError:
        return "Ciw: skipped, not installed (a benchmark extra: pip install -e '.[bench]')"
    return None


def run_ciw(workload: QueueWorkload) -> PeerRun:
    """The workload on Ciw: one node, exponential arrivals and service, ``servers`` servers.
    Raises ImportError when Ciw is not installed (see ciw_missing)."""
    import ciw

    clock = _Clock()
    network = ciw.create_network(
        arrival_distributions=[ciw.dists.Exponential(rate=workload.arrivals_per_second)],
        service_distributions=[ciw.dists.Exponential(rate=1 / workload.service_mean_seconds)],
        number_of_servers=[workload.servers],
    )
    ciw.seed(workload.seed)
    simulation = ciw.Simulation(network)
    simulation.simulate_until_max_time(workload.duration_seconds)
    waits = [record.waiting_time for record in simulation.get_all_records()]
    arrived = simulation.nodes[0].number_of_individuals
    wall, cpu = clock.read()
    return PeerRun("Ciw", arrived, wall, cpu, math.fsum(waits) / len(waits))
