"""Step 3's 'a lost broker takes no acknowledged event' check, judged in the follower-lag
scenario: its texts say how many acknowledged events the crash took, how many partitions' ISR
shrank to their leader alone, and the value at fault; the hint moves min.insync.replicas."""

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


def _texts(material, metrics: Metrics, **event_log) -> dict[str, str]:
    step = material.loaded.step("event-log")
    (check,) = [c for c in step.step.checks if c.id == "broker-loss-nothing-lost"]
    assert check.scenario == "follower-lag"
    reference = load_design(STEPS / material.course.reference_design)
    values = reference.model_dump(mode="json")
    values["event_log"] |= event_log
    names = {
        "design": Design.model_validate(values),
        "scenario": material.loaded.scenarios[check.scenario],
        "metrics": metrics,
    }
    texts = {"pass": check.pass_message, "fail": check.fail_message, "hint": check.hint}
    texts["explain"] = check.explain
    return {k: render_explanation(v, names) for k, v in texts.items()}


def test_min_insync_1_names_the_shrunk_isr_and_the_unflushed_writes(material):
    m = Metrics.model_construct(
        log_lost=270, lost=270, isr_shrunk_partitions=32, producer_blocked_seconds=150.0
    )
    texts = _texts(material, m, min_insync_replicas=1)
    assert texts["fail"] == (
        "The crash took 270 acknowledged events from the log (270 lost in all): the followers of "
        "32 partitions fell behind and left their ISR, and with min.insync.replicas 1 their leader "
        "went on acknowledging writes alone; it died with the last 30 s of them unflushed."
    )
    assert texts["hint"] == (
        "min.insync.replicas 2 (now 1): a partition whose ISR shrank to its leader then refuses "
        "writes instead of acknowledging them on one broker."
    )
    factor_2 = _texts(material, m, min_insync_replicas=1, replication_factor=2)
    assert factor_2["hint"].endswith(
        "on one broker; with a replication factor of 3 (now 2), so a broker down still leaves 2 "
        "replicas in sync and writes go on."
    )
    assert texts["explain"] == (
        "From 120 s the followers of the partitions broker 0 leads fetch nothing; after 30 s "
        "(replica.lag.time.max.ms) they leave the ISR of 32 of 96 partitions; at 210 s broker 0 "
        "fails hard for 120 s, its last 30 s unflushed. Lost 270 acknowledged events, 270 in all; "
        "producers waited 150 s (acks=all, replication factor 3, min.insync.replicas 1)."
    )


def test_the_reference_passes_by_refusing_writes(material):
    m = Metrics.model_construct(
        log_lost=0, lost=0, isr_shrunk_partitions=32, producer_blocked_seconds=210.0
    )
    assert _texts(material, m)["pass"] == (
        "The crash lost 0 acknowledged events: when 32 partitions' ISR shrank to their leader "
        "alone, min.insync.replicas 2 refused their writes (producers waited 210 s) rather than "
        "let one broker acknowledge them."
    )


def test_acks_1_and_replication_factor_1_keep_their_own_reasons(material):
    m = Metrics.model_construct(log_lost=300, lost=300, isr_shrunk_partitions=32)
    acks1 = _texts(material, m, acks="1", enable_idempotence=False)
    assert "with acks=1 only the leader had them when it answered" in acks1["fail"]
    assert acks1["hint"].startswith("Replication factor 3, min.insync.replicas 2 and acks=all")
    rf1 = _texts(material, m, replication_factor=1, min_insync_replicas=1)
    assert "with replication factor 1 the lost broker held the only copy" in rf1["fail"]
