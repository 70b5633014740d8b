"""The monthly cost model: the course's calibration figures and each rule's arithmetic."""

from __future__ import annotations

from pathlib import Path

import pytest

from simulator.cost import model_calls_per_run, monthly_cost, monthly_load, repeat_token_usd
from simulator.design import Design
from simulator.errors import InputFileError
from simulator.fan_out import fan_out_per_run
from simulator.pricing import Pricing, load_pricing
from simulator.result import Metrics
from simulator.scenario import ProviderOutage, Scenario, WorkerCrash

STEPS = Path(__file__).resolve().parents[2] / "steps"
BUDGET_USD = 85_000.0


@pytest.fixture(scope="module")
def pricing() -> Pricing:
    return load_pricing(STEPS / "pricing.yaml")


def durable_design(**changes: object) -> Design:
    design = Design.model_validate(
        {
            "event_log": {
                "partitions": 48,
                "brokers": 3,
                "replication_factor": 3,
                "min_insync_replicas": 2,
            },
            "delivery": {"commit": "after_processing", "dedupe": "durable_same_transaction"},
            "consumers": {
                "agent": {"instances": 4, "concurrency_per_instance": 12, "max_poll_records": 50},
                "tool": {"instances": 2, "concurrency_per_instance": 8},
                "state": {"instances": 2, "concurrency_per_instance": 8},
            },
            "orchestration": {"pattern": "orchestrator_worker", "max_subagents": 5},
            "tools": {"runners": 8},
            "state_store": {"replicas": 2, "replication": "sync"},
        }
    )
    for path, value in changes.items():
        section, field = path.split("__")
        setattr(getattr(design, section), field, value)
    return design


def metrics(**values: int) -> Metrics:
    base = dict(
        arrivals=0,
        processed=0,
        throughput_eps=0.0,
        capacity_eps=0.0,
        utilisation=0.0,
        lag_total_max=0,
        backlog_peak=0,
        drain_seconds=0.0,
        latency_p50_s=0.0,
        latency_p95_s=0.0,
        latency_p99_s=0.0,
    )
    base.update(values)
    return Metrics.model_validate(base)


def test_course_month_is_388800_runs():
    """3 h at 0.5 runs/s and 21 h at 0.1 runs/s make 12,960 runs a day, 388,800 in 30 days."""
    month = monthly_load(Scenario(name="peak").load)
    assert month.runs_per_day == pytest.approx(12_960)
    assert month.runs_per_month == pytest.approx(388_800)
    assert month.hours_per_month == 720


def test_tokens_cost_about_70000_at_3_and_15_dollars(pricing):
    """388,800 runs x 20 calls x (1,500 x $3 + 300 x $15) / 1M = $69,984 (about $70,000)."""
    cost = monthly_cost(durable_design(), Scenario(name="peak"), pricing, budget_usd=BUDGET_USD)
    assert cost.by_component["model_tokens"] == pytest.approx(69_984.00)
    line = next(line for line in cost.lines if line.component == "model_tokens")
    assert "388,800 runs x 20 model calls" in line.detail
    assert "1,500 in x $3/M + 300 out x $15/M" in line.detail


def test_infrastructure_is_a_few_thousand_and_the_total_leaves_headroom(pricing):
    """Infrastructure costs a few thousand; the whole bill is 10-20 % under the budget."""
    cost = monthly_cost(durable_design(), Scenario(name="peak"), pricing, budget_usd=BUDGET_USD)
    infra = sum(
        usd
        for component, usd in cost.by_component.items()
        if not component.startswith(("model", "repeats"))
    )
    assert 1_000 < infra < 10_000
    assert 0.10 <= 1 - cost.monthly_usd / BUDGET_USD <= 0.20
    assert cost.budget_usd == BUDGET_USD


def test_instances_are_paid_all_month(pricing):
    """4 agent instances x $0.17/h x 720 h; 2 replicas x 1 unit x $0.48/h x 720 h."""
    cost = monthly_cost(durable_design(), Scenario(name="peak"), pricing, budget_usd=BUDGET_USD)
    assert cost.by_component["workers_agent"] == pytest.approx(4 * 0.17 * 720)
    assert cost.by_component["database_replicas"] == pytest.approx(2 * 0.48 * 720)
    assert cost.by_component["brokers"] == pytest.approx(3 * 0.42 * 720)


def test_database_is_sized_in_units_of_write_capacity(pricing):
    """5,000 writes/s at 2,000 per instance needs ceil(2.5) = 3 units on the primary."""
    design = durable_design(state_store__write_capacity_per_second=5000)
    cost = monthly_cost(design, Scenario(name="peak"), pricing, budget_usd=BUDGET_USD)
    assert cost.by_component["database_primary"] == pytest.approx(3 * 0.48 * 720)


def test_broker_storage_grows_with_retention_and_replication(pricing):
    """933,120 events/day x 7 days x 2,048 B x RF 3 = 40.1 GB at $0.10."""
    cost = monthly_cost(durable_design(), Scenario(name="peak"), pricing, budget_usd=BUDGET_USD)
    gigabytes = 12_960 * 72 * 7 * 2048 * 3 / 1e9
    assert cost.by_component["broker_storage"] == pytest.approx(round(gigabytes * 0.10, 2))


def test_lines_add_up_to_the_total(pricing):
    """The bill is the sum of its lines, and by_component holds each line's dollars."""
    cost = monthly_cost(durable_design(), Scenario(name="peak"), pricing, budget_usd=BUDGET_USD)
    assert cost.monthly_usd == pytest.approx(sum(line.monthly_usd for line in cost.lines))
    assert cost.by_component == {line.component: line.monthly_usd for line in cost.lines}


def test_uncapped_peer_agents_multiply_model_calls():
    """Peers without max_subagents make 20 x 2.5 = 50 calls; with a cap, the planned 20."""
    load = Scenario(name="peak").load
    uncapped = durable_design(
        orchestration__pattern="peer_agents", orchestration__max_subagents=None
    )
    capped = durable_design(orchestration__pattern="peer_agents", orchestration__max_subagents=5)
    assert model_calls_per_run(uncapped, load).model_calls == pytest.approx(50)
    assert model_calls_per_run(capped, load).model_calls == pytest.approx(20)


def test_uncapped_peers_break_the_budget(pricing):
    """At 50 calls a run the tokens alone cost 2.5 x $69,984 = $174,960, twice the budget."""
    design = durable_design(orchestration__pattern="peer_agents", orchestration__max_subagents=None)
    cost = monthly_cost(design, Scenario(name="peak"), pricing, budget_usd=BUDGET_USD)
    assert cost.by_component["model_tokens"] == pytest.approx(174_960)
    assert cost.monthly_usd > cost.budget_usd


def test_single_agent_uses_4_of_15_of_the_tokens():
    """A single agent uses about 4x a chat's tokens against 15x for a multi-agent run."""
    design = durable_design(orchestration__pattern="single_agent")
    assert model_calls_per_run(design, Scenario(name="peak").load).model_calls == pytest.approx(
        20 * 4 / 15
    )


def test_token_budget_per_run_stops_the_run():
    """A 18,000-token budget at 1,800 tokens a call stops an uncapped run at 10 calls."""
    design = durable_design(
        orchestration__pattern="peer_agents",
        orchestration__max_subagents=None,
        orchestration__token_budget_per_run=18_000,
    )
    shape = model_calls_per_run(design, Scenario(name="peak").load)
    assert shape.model_calls == pytest.approx(10)
    assert "token budget" in shape.rule


def test_a_budget_the_run_fits_in_is_not_named_as_stopping_it():
    """20 planned calls x 1,800 tokens = 36,000: a 36,000-token budget does not stop the run."""
    design = durable_design(orchestration__token_budget_per_run=36_000)
    shape = model_calls_per_run(design, Scenario(name="peak").load)
    assert shape.model_calls == 20
    assert "token budget" not in shape.rule


@pytest.mark.parametrize(
    ("pattern", "subagents", "budget"),
    [
        ("orchestrator_worker", 5, None),
        ("peer_agents", None, None),
        ("peer_agents", None, 40_000),
        ("single_agent", 5, 5_000),
    ],
)
def test_the_bill_prices_the_calls_the_estimate_and_simulation_use(pattern, subagents, budget):
    """Model calls per run on the bill are the workload's own (simulator.fan_out)."""
    design = durable_design(
        orchestration__pattern=pattern,
        orchestration__max_subagents=subagents,
        orchestration__token_budget_per_run=budget,
    )
    load = Scenario(name="peak").load
    assert (
        model_calls_per_run(design, load).model_calls == fan_out_per_run(design, load).model_calls
    )


def test_the_budget_verdict_and_share(pricing):
    """Over budget when the month costs more than the budget; the share is cost / budget."""
    cost = monthly_cost(durable_design(), Scenario(name="peak"), pricing, budget_usd=BUDGET_USD)
    assert cost.budget_share == pytest.approx(cost.monthly_usd / BUDGET_USD)
    assert cost.over_budget is (cost.monthly_usd > BUDGET_USD)
    free = cost.model_copy(update={"budget_usd": 0.0})
    assert free.budget_share == 0.0 and free.over_budget


def test_durable_dedupe_pays_nothing_again(pricing):
    """With durable dedupe, every incident's re-read events are skipped: $0 lines that say why."""
    cost = monthly_cost(durable_design(), Scenario(name="peak"), pricing, budget_usd=BUDGET_USD)
    for component in ("repeats_deploys", "repeats_worker_crashes", "repeats_rebalances"):
        assert cost.by_component[component] == 0.0
    crash = next(line for line in cost.lines if line.component == "repeats_worker_crashes")
    assert "durable dedupe" in crash.detail


def test_without_dedupe_a_crash_repays_one_poll_batch(pricing):
    """15 crashes/month x 1 instance x 50 records x 1,800 tokens, input half at the cached price."""
    design = durable_design(delivery__dedupe="none")
    cost = monthly_cost(design, Scenario(name="peak"), pricing, budget_usd=BUDGET_USD)
    calls = 0.5 * 30 * 1 * 50
    per_call = (1500 * (0.5 * 0.3 + 0.5 * 3.0) + 300 * 15.0) / 1e6
    assert cost.by_component["repeats_worker_crashes"] == pytest.approx(round(calls * per_call, 2))
    crash = next(line for line in cost.lines if line.component == "repeats_worker_crashes")
    assert "15 worker crashes/month x 1 agent instance x 50 events uncommitted" in crash.detail


def test_eager_rebalance_repays_every_member_cooperative_one(pricing):
    """Range assignment revokes all 4 members' batches; cooperative-sticky about one member's."""
    eager = monthly_cost(
        durable_design(delivery__dedupe="none"), Scenario(name="peak"), pricing, budget_usd=1
    )
    sticky_design = durable_design(delivery__dedupe="none")
    sticky_design.consumers.agent.assignment = "cooperative_sticky"
    sticky = monthly_cost(sticky_design, Scenario(name="peak"), pricing, budget_usd=1)
    assert eager.by_component["repeats_rebalances"] == pytest.approx(
        4 * sticky.by_component["repeats_rebalances"], rel=1e-3
    )


def test_commit_before_processing_repays_nothing(pricing):
    """Commit before processing loses the fetched events instead of re-reading them."""
    design = durable_design(delivery__dedupe="none", delivery__commit="before_processing")
    cost = monthly_cost(design, Scenario(name="peak"), pricing, budget_usd=BUDGET_USD)
    assert cost.by_component["repeats_worker_crashes"] == 0.0


def test_auto_commit_repays_the_interval(pricing):
    """Auto-commit: 3 agent events/s over 4 instances x 5 s = 3.75 events re-read per instance."""
    design = durable_design(delivery__dedupe="none", delivery__commit="auto")
    cost = monthly_cost(design, Scenario(name="peak"), pricing, budget_usd=BUDGET_USD)
    rate = 388_800 * 20 / (720 * 3600)
    events = 15 * (rate / 4) * 5
    per_call = (1500 * (0.5 * 0.3 + 0.5 * 3.0) + 300 * 15.0) / 1e6
    assert cost.by_component["repeats_worker_crashes"] == pytest.approx(round(events * per_call, 2))


def test_fallback_pays_the_price_difference_during_outages(pricing):
    """30 outage min x 180 calls/min x ((5-3) x 1,500 + (25-15) x 300) / 1M = $32.40."""
    design = durable_design(model__circuit_breaker={"enabled": True})
    design.model.fallback.enabled = True
    cost = monthly_cost(design, Scenario(name="peak"), pricing, budget_usd=BUDGET_USD)
    calls_per_minute = 388_800 * 20 / (720 * 60)
    assert cost.by_component["fallback_provider"] == pytest.approx(
        round(30 * calls_per_minute * (2 * 1500 + 10 * 300) / 1e6, 2)
    )
    assert (
        "fallback_provider"
        not in monthly_cost(
            durable_design(), Scenario(name="peak"), pricing, budget_usd=1
        ).by_component
    )


def test_simulated_steady_repeats_scale_per_model_call(pricing):
    """3,600 repeated tokens over 9,000 calls = 0.4 per call x 7,776,000 calls a month."""
    cost = monthly_cost(
        durable_design(),
        Scenario(name="peak"),
        pricing,
        budget_usd=BUDGET_USD,
        metrics=metrics(model_calls=9_000, tokens_repeated=3_600),
    )
    tokens = 0.4 * 388_800 * 20
    price = pricing.model.providers["primary"]
    shape = model_calls_per_run(durable_design(), Scenario(name="peak").load)
    assert cost.by_component["repeats_steady"] == pytest.approx(
        round(repeat_token_usd(tokens, shape, price, 0.5), 2)
    )


def test_simulated_crash_replaces_the_closed_form_crash_line(pricing):
    """A worker-crash scenario's repeats count once per crash, 15 crashes a month."""
    scenario = Scenario(name="worker-crash", faults=[WorkerCrash(kind="worker_crash")])
    cost = monthly_cost(
        durable_design(delivery__dedupe="none"),
        scenario,
        pricing,
        budget_usd=BUDGET_USD,
        metrics=metrics(model_calls=9_000, tokens_repeated=360_000),
    )
    crash_lines = [line for line in cost.lines if line.component == "repeats_worker_crashes"]
    assert len(crash_lines) == 1
    assert (
        "simulated in worker-crash: 360,000 tokens repeated per incident x 15 incidents/month"
        in (crash_lines[0].detail)
    )
    shape = model_calls_per_run(durable_design(), scenario.load)
    price = pricing.model.providers["primary"]
    assert crash_lines[0].monthly_usd == pytest.approx(
        round(repeat_token_usd(360_000 * 15, shape, price, 0.5), 2)
    )


def test_provider_names_fall_back_to_the_role_price(pricing):
    """A provider the catalog does not name is priced as its role's default entry."""
    assert pricing.model.price_for("acme", "fallback") == pricing.model.providers["fallback"]
    assert pricing.model.providers["primary"].cached_input_usd_per_million_tokens == pytest.approx(
        0.3
    )


def test_a_bad_catalog_names_file_line_and_field(tmp_path):
    """A role that names no provider is an error at the model section's line."""
    bad = (STEPS / "pricing.yaml").read_text().replace("fallback: fallback", "fallback: nobody")
    path = tmp_path / "pricing.yaml"
    path.write_text(bad)
    with pytest.raises(InputFileError) as caught:
        load_pricing(path)
    error = caught.value.errors[0]
    assert error.file == str(path)
    assert error.field == "model"
    assert error.line == bad.splitlines().index("model:") + 1
    assert "nobody" in error.message


def test_fallback_calls_are_billed_at_the_fallbacks_price_even_without_a_breaker(pricing):
    """Without a breaker each call of an outage reaches the fallback after the primary's error,
    and the fallback bills it: the closed form prices the month's outage minutes either way."""
    design = durable_design(model__circuit_breaker={"enabled": False})
    design.model.fallback.enabled = True
    cost = monthly_cost(design, Scenario(name="peak"), pricing, budget_usd=BUDGET_USD)
    calls_per_minute = 388_800 * 20 / (720 * 60)
    assert cost.by_component["fallback_provider"] == pytest.approx(
        round(30 * calls_per_minute * (2 * 1500 + 10 * 300) / 1e6, 2)
    )


def test_simulated_fallback_calls_are_billed_per_outage(pricing):
    """6,000 fallback calls in a 10 min outage x 3 outages a month (30 min / 10 min) x
    ((5-3) x 1,500 + (25-15) x 300) / 1M = $108; refused (429) calls add nothing."""
    design = durable_design(model__circuit_breaker={"enabled": True})
    design.model.fallback.enabled = True
    scenario = Scenario(
        name="provider-outage",
        faults=[ProviderOutage(kind="provider_outage", duration_seconds=600)],
    )
    cost = monthly_cost(
        design,
        scenario,
        pricing,
        budget_usd=BUDGET_USD,
        metrics=metrics(model_calls=9_000, fallback_calls=6_000),
    )
    assert cost.by_component["fallback_provider"] == pytest.approx(6_000 * 3 * 0.006)
    refused = monthly_cost(
        design,
        scenario,
        pricing,
        budget_usd=BUDGET_USD,
        metrics=metrics(model_calls=9_000, fallback_calls=6_000, http_429s=50_000),
    )
    assert refused.monthly_usd == cost.monthly_usd


def test_per_step_checkpoints_pay_a_write_for_every_model_call(pricing: Pricing) -> None:
    """A month of the peak scenario: 20 checkpoint writes a run per step, 1 per run, at
    $0.20 per million writes."""
    from simulator.files import load_design, load_scenario

    ref = load_design(STEPS / "designs" / "reference.yaml")
    scenario = load_scenario(STEPS / "scenarios" / "peak.yaml")
    runs = monthly_load(scenario.load).runs_per_month
    lines = {
        g: monthly_cost(
            Design.model_validate(
                {**ref.model_dump(mode="json"), "checkpoint": {"granularity": g}}
            ),
            scenario,
            pricing,
            budget_usd=1e9,
        ).by_component["checkpoint_writes"]
        for g in ("per_step", "per_run")
    }
    assert lines["per_step"] == pytest.approx(runs * 20 * 0.20 / 1e6, abs=0.005)
    assert lines["per_run"] == pytest.approx(runs * 0.20 / 1e6, abs=0.005)
