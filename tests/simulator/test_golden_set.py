"""The golden result set (scripts/golden.py): results of every course design and scenario.

A change meant to keep the simulator's results must leave every stored result byte-identical;
one meant to change them regenerates the set (``scripts/golden.py --write``) and its diff is read
(``scripts/golden.py --diff`` before regenerating). The whole set is 30 designs x 9 scenarios x
seeds 1-3; the suite compares seed 1 of every design, and the script compares all three seeds.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("golden", REPO / "scripts" / "golden.py")
assert _spec is not None and _spec.loader is not None
golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(golden)


def test_every_design_has_a_stored_result_for_every_scenario_and_seed():
    for design in golden.designs():
        stored = golden.read_set(golden.golden_file(design))
        expected = {
            f"{design.stem}/{s.stem}/{seed}" for s in golden.scenarios() for seed in golden.SEEDS
        }
        assert set(stored) == expected, design.name


@pytest.mark.parametrize("design", golden.designs(), ids=lambda p: p.stem)
def test_seed_1_results_are_byte_identical_to_the_golden_set(design):
    stored = golden.read_set(golden.golden_file(design))
    for scenario in golden.scenarios():
        line = golden.result_line(design, scenario, 1)
        key = json.loads(line)["key"]
        if stored[key] != line:
            changes = list(golden._changed_paths(json.loads(stored[key]), json.loads(line)))
            pytest.fail(
                f"{key} differs from the golden set (scripts/golden.py --diff):\n"
                + "\n".join(changes[:20])
            )
