"""Same design + scenario + seed + simulator version -> byte-identical JSON, across processes.

The run exercises every random path: Poisson runs, lognormal and exponential step times, Zipf
tenants keyed by tenant id, a provider tight enough that calls queue at the gateway, a provider
outage whose calls are retried with full jitter, and a crash of one instance of three
(session-timeout detection and two rebalances).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from simulator import simulate
from simulator.design import Design
from simulator.scenario import Scenario

REPO = Path(__file__).resolve().parents[2]

DESIGN = {
    "event_log": {"partitions": 24, "partition_key": "tenant_id"},
    "delivery": {"commit": "after_processing", "dedupe": "none"},
    "consumers": {
        "agent": {"instances": 3, "concurrency_per_instance": 6, "max_poll_records": 20},
        "tool": {"instances": 2, "concurrency_per_instance": 8},
        "state": {"instances": 1, "concurrency_per_instance": 24},
    },
    "model": {
        "primary": {"rpm": 240, "tpm": 1_000_000, "max_concurrency": 12},
        "retry": {"max_attempts": 4, "base_backoff_seconds": 0.5, "jitter": "full"},
    },
    "orchestration": {"pattern": "orchestrator_worker"},
}
SCENARIO = {
    "name": "determinism",
    "duration_seconds": 240,
    "load": {"runs_per_second": 0.3},
    "faults": [
        {"kind": "worker_crash", "at_seconds": 60, "duration_seconds": 90, "instances": 1},
        {"kind": "provider_outage", "at_seconds": 170, "duration_seconds": 20},
    ],
}

SCRIPT = """
import json, sys
from simulator import simulate
from simulator.design import Design
from simulator.scenario import Scenario
d = Design.model_validate(json.loads(sys.argv[1]))
s = Scenario.model_validate(json.loads(sys.argv[2]))
sys.stdout.write(simulate(d, s, int(sys.argv[3])).model_dump_json())
"""


def run_in_subprocess(seed: int, hash_seed: str) -> bytes:
    import json

    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(DESIGN), json.dumps(SCENARIO), str(seed)],
        check=True,
        capture_output=True,
        env=env,
        cwd=REPO,
        timeout=300,
    )
    return out.stdout


def test_same_inputs_give_identical_json_across_processes() -> None:
    first = run_in_subprocess(11, "1")
    second = run_in_subprocess(11, "98765")
    assert first == second
    here = simulate(
        Design.model_validate(DESIGN), Scenario.model_validate(SCENARIO), 11
    ).model_dump_json()
    assert here.encode() == first


def test_the_run_exercises_retries_and_rebalances() -> None:
    m = simulate(Design.model_validate(DESIGN), Scenario.model_validate(SCENARIO), 11).metrics
    assert m.model_wait_mean_s > 0
    assert m.model_recovery_s is not None and m.model_recovery_s > 0
    assert m.rebalances == 2
    assert m.redelivered > 0


def test_another_seed_gives_another_result() -> None:
    design, scenario = Design.model_validate(DESIGN), Scenario.model_validate(SCENARIO)
    assert (
        simulate(design, scenario, 11).model_dump_json()
        != simulate(design, scenario, 12).model_dump_json()
    )
