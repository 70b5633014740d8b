"""The simulation never imports the estimate: both read capacity and the workload from their own
homes (simulator.capacity, simulator.fan_out), so neither can lean on the other's figures."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_the_simulation_and_its_faults_load_without_the_estimate() -> None:
    code = (
        "import sys\n"
        "import simulator.engine.run, simulator.faults, simulator.cost\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('simulator.estimate'))\n"
        "print(','.join(loaded))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        cwd=ROOT,
    )
    assert out.stdout.strip() == ""
