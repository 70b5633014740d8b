"""Step 3's 'producers keep writing' check gives the reason producers blocked from the design's
own values: replication factor 1 leaves a partition's only copy on the lost broker (acks 1 and
min.insync.replicas 1 do not come into it); acks=all with min.insync.replicas at the factor
leaves too few in-sync replicas. Its hint moves the value at fault."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.checks.explanations import render_explanation
from app.grading.grader import load_material
from simulator.design import Design
from simulator.files import load_design
from simulator.result import Metrics

STEPS = Path(__file__).resolve().parents[2] / "steps"


@pytest.fixture(scope="module")
def material():
    return load_material(STEPS)


def _texts(material, **event_log) -> tuple[str, str]:
    step = material.loaded.step("event-log")
    (check,) = [c for c in step.step.checks if c.id == "broker-loss-keeps-writing"]
    reference = load_design(STEPS / material.course.reference_design)
    values = reference.model_dump(mode="json")
    values["event_log"] |= event_log
    design = Design.model_validate(values)
    names = {
        "design": design,
        "scenario": material.loaded.scenarios[step.step.scenario],
        "metrics": Metrics.model_construct(producer_blocked_seconds=300.0),
    }
    return (
        render_explanation(check.fail_message, names),
        render_explanation(check.hint, names),
    )


def test_replication_factor_1_blames_the_only_copy_not_in_sync_replicas(material):
    fail, hint = _texts(
        material, replication_factor=1, min_insync_replicas=1, acks="1", enable_idempotence=False
    )
    assert fail == (
        "Producers were blocked 300 s: with replication factor 1 the partitions on the lost broker "
        "had their only copy there, so they were offline and refused writes."
    )
    assert "in-sync" not in fail and "acks=all" not in fail
    assert hint == (
        "Raise the replication factor above 1, so every partition keeps a copy with 1 broker down."
    )


def test_min_insync_at_the_factor_with_acks_all_blames_in_sync_replicas(material):
    fail, hint = _texts(material, replication_factor=3, min_insync_replicas=3, acks="all")
    assert fail == (
        "Producers were blocked 300 s: acks=all needs 3 in-sync replicas (min.insync.replicas) and "
        "2 replicas were left of 3."
    )
    assert hint == (
        "Keep min.insync.replicas at most 2 (now 3), the replicas left with 1 broker down: 2 "
        "already keeps any acknowledged write off a single broker."
    )


def test_factor_2_with_min_insync_2_is_told_to_raise_the_factor_not_to_lower_min_insync(material):
    """Lowering min.insync.replicas to 1 fails broker-loss-nothing-lost, whose hint sent the
    learner back to 2: the way out of the loop is a replication factor of 3."""
    fail, hint = _texts(material, replication_factor=2, min_insync_replicas=2, acks="all")
    assert fail == (
        "Producers were blocked 300 s: acks=all needs 2 in-sync replicas (min.insync.replicas) and "
        "1 replica was left of 2."
    )
    assert hint == (
        "Raise the replication factor to 3 (now 2), with min.insync.replicas 2: with 1 broker "
        "down, 2 replicas stay in sync. Lowering min.insync.replicas to 1 instead lets one broker "
        "acknowledge writes alone, and lose them with it."
    )
