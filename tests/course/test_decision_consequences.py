"""No decision without a consequence: steps/consequences.yaml, checked with a few seeds.

Each row names a decision, a wrong value, a course scenario and the metric that the wrong value
must make worse on every seed. scripts/consequences.py checks seeds 1-20 (the figures quoted in
release notes); this suite checks seeds 1-3, so a model change that silences a decision fails
here. The decisions the course must show are listed below; one not yet simulated is an expected
failure that turns into a failure as soon as its row makes it pass (then drop it from the list).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import yaml

from simulator.design import Design
from simulator.result import Metrics

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("consequences", REPO / "scripts" / "consequences.py")
assert _spec is not None and _spec.loader is not None
consequences = importlib.util.module_from_spec(_spec)
sys.modules["consequences"] = consequences  # its dataclasses look their module up
_spec.loader.exec_module(consequences)

SEEDS = (1, 2, 3)

MUST_SHOW = (
    "event_log.partition_key",
    "delivery.dedupe",
    "delivery.commit",
    "event_log.partitions",
    "event_log.replication_factor",
    "event_log.min_insync_replicas",
    "event_log.acks",
    "failures.dead_letter_queue",
    "state_store.failover",
    "model.fallback.enabled",
    "orchestration.pattern",
    "orchestration.max_subagents",
    "orchestration.token_budget_per_run",
    "failures.retry.jitter",
    "model.cache.enabled",
    "model.cache.ttl_hours",
    "checkpoint.reuse_recorded_results",
    "checkpoint.granularity",
    "consumers.agent.session_timeout_ms",
    "consumers.agent.assignment",
    "model.circuit_breaker.enabled",
    "model.circuit_breaker.failure_threshold",
    "model.circuit_breaker.open_seconds",
    "data_model.outbox_relay_poll_interval_ms",
)
"""Decisions the course teaches that must move a simulated metric (the causal-runs issue)."""

NOT_YET_SIMULATED: set[str] = set()
"""Of MUST_SHOW, the decisions whose row is still missing from steps/consequences.yaml."""

ROWS = consequences.decisions()
REFERENCE = yaml.safe_load((REPO / "steps" / "designs" / "reference.yaml").read_text("utf-8"))


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.decision)
def test_a_row_names_real_fields_a_course_scenario_and_a_metric(row):
    Design.model_validate(consequences.with_values(REFERENCE, row.wrong))
    assert (REPO / "steps" / "scenarios" / f"{row.scenario}.yaml").is_file(), row.scenario
    head = row.metric.split(".")[0]
    assert head in Metrics.model_fields, f"{row.metric} is not a metric"
    assert (REPO / "steps" / row.step).is_dir(), row.step


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.decision)
def test_the_wrong_value_makes_its_metric_worse_on_every_seed(row):
    for seed in SEEDS:
        right, wrong = consequences.measure(row, seed)
        assert consequences.shows(row, right, wrong), (
            f"{row.decision}: {row.metric} is {right:g} for the reference and {wrong:g} for "
            f"{row.wrong} at seed {seed} ({row.worse} is worse)"
        )


@pytest.mark.parametrize(
    "decision",
    [
        pytest.param(
            d,
            marks=pytest.mark.xfail(strict=True, reason="not simulated yet")
            if d in NOT_YET_SIMULATED
            else (),
        )
        for d in MUST_SHOW
    ],
)
def test_every_decision_the_course_teaches_has_a_row(decision):
    assert decision in {row.decision for row in ROWS}
