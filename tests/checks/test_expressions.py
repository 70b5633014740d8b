"""Check expressions: simpleeval over the documented names, and the static problems lint reports."""

from __future__ import annotations

import pytest

from app.checks.expressions import ExpressionError, evaluate, expression_problems
from app.checks.names import fmt, plural
from simulator.design import Design
from simulator.result import GroupMetrics, Metrics


def _metrics() -> Metrics:
    return Metrics(
        arrivals=21_600,
        processed=21_500,
        throughput_eps=36.0,
        capacity_eps=24.0,
        utilisation=0.833,
        lag_total_max=3600,
        backlog_peak=3600,
        drain_seconds=900.0,
        latency_p50_s=2.0,
        latency_p95_s=4.0,
        latency_p99_s=6.0,
        by_group={
            "agent": GroupMetrics(
                arrivals=6000,
                processed=6000,
                capacity_eps=24.0,
                utilisation=0.833,
                lag_total_max=3600,
                busy_partitions_max=40,
                instances_alive_min=0,
            )
        },
    )


@pytest.fixture
def names() -> dict[str, object]:
    return {
        "design": Design(),
        "scenario": None,
        "metrics": _metrics(),
        "cost": None,
        "estimate": None,
        "budget_usd": 85_000.0,
    }


def test_enums_compare_with_their_values(names):
    """StrEnum fields compare with plain strings: the default commit mode is auto."""
    assert evaluate('design.delivery.commit == "auto"', names) is True
    assert evaluate('design.event_log.acks in ("all", "1")', names) is True


def test_subscripts_and_arithmetic(names):
    """metrics.by_group["agent"] is reachable and arithmetic works on its fields."""
    assert evaluate('metrics.by_group["agent"].capacity_eps / 2', names) == 12.0
    assert evaluate("round(metrics.utilisation * 100) == 83", names) is True
    assert evaluate("max(metrics.drain_seconds, 60) if metrics.drain_seconds else 0", names) == 900


def test_reading_a_missing_name_is_an_error(names):
    """A check that reads cost in a step without a scenario errors, naming the missing name."""
    with pytest.raises(ExpressionError, match="cost is not available here"):
        evaluate("cost.monthly_usd < budget_usd", names)


def test_methods_and_private_attributes_are_unreachable(names):
    """Only fields and properties can be read: model methods and dunders are refused."""
    for expr in ("design.model_dump()", "design.__class__", "design.event_log.model_copy"):
        with pytest.raises(ExpressionError):
            evaluate(expr, names)


def test_properties_are_readable(names):
    """A model property (DeliverySection.enable_auto_commit) counts as a field."""
    assert evaluate("design.delivery.enable_auto_commit", names) is True


def test_unknown_field_suggests_the_nearest(names):
    """A misspelt field is reported with the fields it may have meant."""
    problems = expression_problems("design.event_log.partitons >= 40")
    assert problems == [
        "design.event_log.partitons: EventLogSection has no field 'partitons'; "
        "did you mean partitions, partition_key?"
    ]


def test_unknown_names_and_functions_are_reported():
    """Names outside the documented list, and calls of anything but the listed functions."""
    problems = expression_problems("sum(x) > 1")
    assert any("unknown name 'x'" in p for p in problems)
    only = (
        "only abs, cost_changes, cost_groups, fmt, len, max, min, paid_repeats_usd, pct, plural, "
        "round, usd can be called: sum()"
    )
    assert any(only in p for p in problems)


def test_unsupported_syntax_is_reported():
    """Lambda and walrus are not part of the expression language."""
    assert "Lambda is not supported in a check expression" in expression_problems("(lambda: 1)()")
    assert "NamedExpr is not supported" in expression_problems("(x := 1)")[0]


def test_well_formed_expressions_have_no_problems():
    """Chains through dict and list elements and unions resolve to real fields."""
    for expr in (
        'metrics.by_group["agent"].busy_partitions_max >= 40',
        "cost.lines[0].monthly_usd > 0",
        "scenario.faults[0].duration_seconds > 0",
        "scenario.load.fan_out.step_events_per_run == 72",
        "[g.instances for g in (design.consumers.agent, design.consumers.tool)]",
        "fmt(cost.monthly_usd, 0)",
    ):
        assert expression_problems(expr) == [], expr


def test_fmt_formats_numbers_for_explanations():
    """Thousands separators for counts, fixed decimals for floats, n/a for None."""
    assert fmt(12_960) == "12,960"
    assert fmt(83.3333) == "83.3"
    assert fmt(69_984.0, 0) == "69,984"
    assert fmt(None) == "n/a"
    assert fmt(True) == "yes"
    assert fmt(float("inf")) == "never"


def test_plural_counts_with_their_noun():
    """One is singular; any other count, None included, takes the plural; counts get separators."""
    assert plural(1, "event") == "1 event"
    assert plural(0, "event") == "0 events"
    assert plural(3507, "event") == "3,507 events"
    assert plural(1, "saga holds", "sagas hold") == "1 saga holds"
    assert plural(2, "saga holds", "sagas hold") == "2 sagas hold"
    assert plural(None, "event") == "n/a events"
