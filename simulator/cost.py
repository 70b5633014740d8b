"""The monthly bill of a design: infrastructure and model tokens, line by line, against a budget.

Every line is a ``CostLine`` whose ``detail`` is the arithmetic with the design's own numbers, so a
learner can redo it by hand. A month is the scenario's daily profile (peak and off-peak blocks of
runs per second) times ``load.days_per_month``.

Rules (each documented where it is computed):

- Infrastructure runs all month: the design has a fixed fleet sized for the peak, so instances are
  paid for 24 h x days_per_month whatever the hour's load.
- Model calls per run come from the scenario's fan-out (``fan_out.model_calls``: the planned run of
  an orchestrator with capped researchers), shaped by the design's orchestration
  (``model_calls_per_run``), and stop at the design's ``token_budget_per_run``.
- Tokens paid again for repeats: each incident the scenario's ``load.repeats`` names per day
  (deploys, worker crashes, rebalances) re-sends the agent events its workers had not committed, to
  the model, unless durable dedupe or the response cache stops them (``repeat_lines``). When a
  simulation's metrics are given, ``metrics.tokens_repeated`` is scaled to a month as well: per
  model call for a scenario without incident faults, per incident times incidents a month for a
  scenario with one (that simulated figure then replaces the closed form of the same incident).
- Checkpoint writes: every run writes its checkpoints to the state store, billed per million
  writes (``pricing.database.usd_per_million_writes``): one a model call ``per_step``, one an agent
  ``per_agent``, one a run ``per_run`` (``simulator.checkpoints``).
- The fallback provider: every call the fallback answers is billed at the fallback's price (with
  or without a circuit breaker: without one, each call reaches the fallback after the primary's
  error); the line is the price difference over the primary's. When a provider outage was
  simulated, the simulated ``metrics.fallback_calls`` per outage x outages a month (so a breaker
  that stays open after the primary recovered pays the fallback longer); otherwise the month's
  outage minutes x the average model calls per minute. Refused (HTTP 429) and failed calls are
  not billed: providers charge for the tokens of calls they answer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from simulator.checkpoints import checkpoint_writes_per_run
from simulator.design import CommitMode, Dedupe, Design, OrchestrationPattern
from simulator.fan_out import SINGLE_AGENT_CALL_FACTOR, fan_out_per_run, stopped_by_token_budget
from simulator.groups import GROUPS
from simulator.pricing import Pricing, ProviderPrice
from simulator.result import Cost, CostLine, Metrics
from simulator.scenario import Load, Scenario

HOURS_PER_DAY = 24
TOKENS_PER_MILLION = 1_000_000


def usd(amount: float) -> str:
    """Dollars for a detail string: ``$69,984`` (whole dollars from $100 up, cents below)."""
    if abs(amount) >= 100:
        return f"${amount:,.0f}"
    return f"${amount:,.2f}"


def _price(amount: float) -> str:
    """A unit price for a detail string: ``$0.0832``, ``$3``."""
    return f"${amount:g}"


def _plural(count: float, word: str) -> str:
    """``1 replica``, ``2 replicas``."""
    return f"{_num(count)} {word}{'' if count == 1 else 's'}"


def _num(value: float) -> str:
    """A count or rate for a detail string: thousands separators, no trailing zeros."""
    if float(value).is_integer():
        return f"{value:,.0f}"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:,.3g}" if abs(value) < 1 else f"{value:,.2f}".rstrip("0").rstrip(".")


@dataclass(frozen=True)
class MonthlyLoad:
    """A month of the scenario's load: runs per day from the daily profile, and days per month."""

    runs_per_day: float
    days: float
    profile_detail: str

    @property
    def runs_per_month(self) -> float:
        """Runs in a month."""
        return self.runs_per_day * self.days

    @property
    def hours_per_month(self) -> float:
        """Hours in a month (24 x days)."""
        return HOURS_PER_DAY * self.days

    @property
    def seconds_per_month(self) -> float:
        """Seconds in a month."""
        return self.hours_per_month * 3600


def monthly_load(load: Load) -> MonthlyLoad:
    """Runs per day and per month from ``load.daily_profile`` (blocks of hours at runs/s).

    Without a profile the window's own rate holds all day: ``runs_per_second``, or
    ``step_events_per_second`` divided by the step events of a run.
    """
    blocks = [(b.hours, b.runs_per_second) for b in load.daily_profile]
    if not blocks:
        rate = load.runs_per_second
        if rate is None:
            rate = (load.step_events_per_second or 0.0) / max(load.fan_out.step_events_per_run, 1)
        blocks = [(24.0, rate)]
    runs_per_day = sum(hours * 3600 * rate for hours, rate in blocks)
    parts = " + ".join(f"{_num(hours)} h x {_num(rate)} runs/s" for hours, rate in blocks)
    detail = f"{parts} = {_num(runs_per_day)} runs/day"
    return MonthlyLoad(runs_per_day=runs_per_day, days=load.days_per_month, profile_detail=detail)


@dataclass(frozen=True)
class RunShape:
    """Model calls per run after the design's orchestration, and the rule that produced them."""

    model_calls: float
    tokens_in_per_call: int
    tokens_out_per_call: int
    rule: str

    @property
    def tokens_per_call(self) -> int:
        """Input plus output tokens of one call."""
        return self.tokens_in_per_call + self.tokens_out_per_call


def model_calls_per_run(design: Design, load: Load) -> RunShape:
    """Model calls one run makes under the design's orchestration.

    - orchestrator_worker, or peer_agents with ``max_subagents``: the scenario's planned
      ``fan_out.model_calls`` (the multi-agent run, about 15x a chat's tokens);
    - peer_agents without a cap: ``fan_out.model_calls x fan_out.uncapped_peer_multiplier`` (peers
      keep spawning peers; seed 000 reports 50 subagents for a simple query);
    - single_agent: the planned calls x 4/15 (a single agent uses about 4x a chat's tokens, a
      multi-agent run about 15x; seed 000); with a causal run model, the planned calls in one
      task, each carrying 4/15 of the tokens.
    A ``token_budget_per_run`` then stops the run at budget / tokens per call. The figure is
    :func:`simulator.fan_out.fan_out_per_run`'s, the one the estimate and the simulation use;
    ``rule`` spells it out for the bill.
    """
    fan_out = load.fan_out
    tokens = load.tokens
    planned = float(fan_out.model_calls)
    orchestration = design.orchestration
    calls = fan_out_per_run(design, load).model_calls
    tokens_in, tokens_out = tokens.input_per_call, tokens.output_per_call
    if orchestration.pattern is OrchestrationPattern.single_agent and load.run_model == "causal":
        rule = f"single agent: {_num(calls)} calls in one task, each 4/15 of the tokens"
        tokens_in = round(tokens_in * SINGLE_AGENT_CALL_FACTOR)
        tokens_out = round(tokens_out * SINGLE_AGENT_CALL_FACTOR)
    elif orchestration.pattern is OrchestrationPattern.single_agent:
        rule = f"single agent: {_num(planned)} planned x 4/15"
    elif (
        orchestration.pattern is OrchestrationPattern.peer_agents
        and orchestration.max_subagents is None
    ):
        multiplier = _num(fan_out.uncapped_peer_multiplier)
        rule = f"peer agents, no fan-out cap: {_num(planned)} planned x {multiplier}"
    else:
        rule = "planned fan-out"
    per_call = tokens_in + tokens_out
    budget = orchestration.token_budget_per_run
    if budget is not None and stopped_by_token_budget(design, load):
        rule += f", stopped by the token budget {_num(budget)} / {_num(per_call)} tokens per call"
    return RunShape(calls, tokens_in, tokens_out, rule)


def _line(component: str, monthly_usd: float, detail: str) -> CostLine:
    return CostLine(component=component, monthly_usd=round(monthly_usd, 2), detail=detail)


def infrastructure_lines(design: Design, scenario: Scenario, pricing: Pricing) -> list[CostLine]:
    """Brokers, their disk, the three consumer groups, tool runners, database primary and replicas.

    Broker disk holds ``retention_hours`` of a day's step events, ``event_bytes`` each, on
    ``replication_factor`` brokers. The database is sized in instance units of
    ``writes_per_second_per_instance`` (ceil), paid on the primary and on each replica.
    """
    month = monthly_load(scenario.load)
    hours = month.hours_per_month
    lines: list[CostLine] = []
    log = design.event_log
    broker_price = pricing.brokers.instance_usd_per_hour
    lines.append(
        _line(
            "brokers",
            log.brokers * broker_price * hours,
            f"{_plural(log.brokers, 'broker')} x {_price(broker_price)}/h x {_num(hours)} h",
        )
    )
    shape = model_calls_per_run(design, scenario.load)
    fan_out = scenario.load.fan_out
    events_per_run = shape.model_calls + fan_out.tool_calls + fan_out.state_writes
    events_per_day = month.runs_per_day * events_per_run
    retention_days = log.retention_hours / HOURS_PER_DAY
    gigabytes = (
        events_per_day * retention_days * pricing.brokers.event_bytes * log.replication_factor / 1e9
    )
    storage_price = pricing.brokers.storage_usd_per_gb_month
    lines.append(
        _line(
            "broker_storage",
            gigabytes * storage_price,
            f"{_num(events_per_day)} step events/day x {_num(retention_days)} days retained x "
            f"{pricing.brokers.event_bytes:,} B x replication factor {log.replication_factor} = "
            f"{gigabytes:,.1f} GB x {_price(storage_price)}/GB-month",
        )
    )
    for group_name in GROUPS:
        group = design.consumers.by_name(group_name)
        price = pricing.workers.instance_usd_per_hour(group_name)
        lines.append(
            _line(
                f"workers_{group_name}",
                group.instances * price * hours,
                f"{_plural(group.instances, group_name + ' instance')} x {_price(price)}/h x "
                f"{_num(hours)} h",
            )
        )
    runner_price = pricing.tool_runners.runner_usd_per_hour
    lines.append(
        _line(
            "tool_runners",
            design.tools.runners * runner_price * hours,
            f"{_plural(design.tools.runners, 'runner')} x {_price(runner_price)}/h x "
            f"{_num(hours)} h",
        )
    )
    lines.extend(_database_lines(design, pricing, hours))
    writes = month.runs_per_month * checkpoint_writes_per_run(design, shape.model_calls)
    write_price = pricing.database.usd_per_million_writes
    per_run = writes / month.runs_per_month if month.runs_per_month else 0
    lines.append(
        _line(
            "checkpoint_writes",
            writes * write_price / 1e6,
            f"{design.checkpoint.granularity} checkpoints: {_num(month.runs_per_month)} runs x "
            f"{_num(per_run)} {'write' if per_run == 1 else 'writes'} = "
            f"{_num(writes)} writes/month x {_price(write_price)} per million",
        )
    )
    return lines


def _database_lines(design: Design, pricing: Pricing, hours: float) -> list[CostLine]:
    db = pricing.database
    store = design.state_store
    units = max(1, math.ceil(store.write_capacity_per_second / db.writes_per_second_per_instance))
    sizing = (
        f"{_plural(units, 'instance unit')} for "
        f"{_num(store.write_capacity_per_second)} writes/s "
        f"({_num(db.writes_per_second_per_instance)} writes/s each)"
    )
    lines = [
        _line(
            "database_primary",
            units * db.primary_usd_per_hour * hours,
            f"primary: {sizing} x {_price(db.primary_usd_per_hour)}/h x {_num(hours)} h",
        )
    ]
    if store.replicas:
        lines.append(
            _line(
                "database_replicas",
                store.replicas * units * db.replica_usd_per_hour * hours,
                f"{_plural(store.replicas, 'replica')} x {_plural(units, 'unit')} x "
                f"{_price(db.replica_usd_per_hour)}/h x {_num(hours)} h",
            )
        )
    return lines


def _call_usd(shape: RunShape, price: ProviderPrice) -> float:
    return (
        shape.tokens_in_per_call * price.input_usd_per_million_tokens
        + shape.tokens_out_per_call * price.output_usd_per_million_tokens
    ) / TOKENS_PER_MILLION


def token_lines(
    design: Design, scenario: Scenario, pricing: Pricing, metrics: Metrics | None = None
) -> list[CostLine]:
    """First-time model tokens for a month of runs, and the fallback's extra during outages.

    Tokens: runs a month x model calls per run x (input tokens x input price + output tokens x
    output price) / 1M, at the price of the design's primary provider. Fallback (with a fallback
    enabled, breaker or not): the calls it answers pay the price difference. With ``metrics`` of a
    scenario that has a provider outage, those calls are the simulated ``fallback_calls`` x
    outages a month; otherwise ``repeats.provider_outage_minutes_per_month`` of the month's
    average model calls per minute. Refused (429) calls appear nowhere: they are not billed.
    """
    load = scenario.load
    month = monthly_load(load)
    shape = model_calls_per_run(design, load)
    primary = pricing.model.price_for(design.model.primary.name, "primary")
    calls = month.runs_per_month * shape.model_calls
    lines = [
        _line(
            "model_tokens",
            calls * _call_usd(shape, primary),
            f"({month.profile_detail}) x {_num(month.days)} days = "
            f"{_num(month.runs_per_month)} runs x {_num(shape.model_calls)} model calls "
            f"({shape.rule}) x "
            f"({shape.tokens_in_per_call:,} in x ${primary.input_usd_per_million_tokens:g}/M + "
            f"{shape.tokens_out_per_call:,} out x ${primary.output_usd_per_million_tokens:g}/M)",
        )
    ]
    model = design.model
    if model.fallback.enabled:
        fallback = pricing.model.price_for(model.fallback.name, "fallback")
        extra_per_call = _call_usd(shape, fallback) - _call_usd(shape, primary)
        incident = incidents_per_month(scenario)
        if metrics is not None and incident is not None and incident[0] == _OUTAGE_COMPONENT:
            _, per_month, rate = incident
            fallback_calls = metrics.fallback_calls * per_month
            lines.append(
                _line(
                    "fallback_provider",
                    fallback_calls * extra_per_call,
                    f"simulated in {scenario.name}: {metrics.fallback_calls:,} fallback calls per "
                    f"outage x {_num(per_month)} outages/month ({rate}) x "
                    f"({shape.tokens_in_per_call:,} in x "
                    f"(${fallback.input_usd_per_million_tokens:g} - "
                    f"${primary.input_usd_per_million_tokens:g}) + "
                    f"{shape.tokens_out_per_call:,} out x "
                    f"(${fallback.output_usd_per_million_tokens:g} - "
                    f"${primary.output_usd_per_million_tokens:g})) / 1M",
                )
            )
            return lines
        minutes = load.repeats.provider_outage_minutes_per_month
        calls_per_minute = calls / (month.hours_per_month * 60)
        lines.append(
            _line(
                "fallback_provider",
                minutes * calls_per_minute * extra_per_call,
                f"{_num(minutes)} outage min/month x {_num(calls_per_minute)} model calls/min x "
                f"({shape.tokens_in_per_call:,} in x (${fallback.input_usd_per_million_tokens:g} - "
                f"${primary.input_usd_per_million_tokens:g}) + {shape.tokens_out_per_call:,} out x "
                f"(${fallback.output_usd_per_million_tokens:g} - "
                f"${primary.output_usd_per_million_tokens:g})) / 1M",
            )
        )
    return lines


def repeat_token_usd(
    tokens: float, shape: RunShape, price: ProviderPrice, cached_share: float
) -> float:
    """Dollars for ``tokens`` repeated tokens, split into input and output as one call splits them.

    A repeated call re-sends the same prompt, so ``cached_share`` of its input is billed at the
    cached-input price; its output is generated, and billed, again in full.
    """
    per_call = shape.tokens_per_call
    if per_call == 0 or tokens <= 0:
        return 0.0
    input_price = (
        cached_share * price.cached_input_usd_per_million_tokens
        + (1 - cached_share) * price.input_usd_per_million_tokens
    )
    usd_per_call = (
        shape.tokens_in_per_call * input_price
        + shape.tokens_out_per_call * price.output_usd_per_million_tokens
    ) / TOKENS_PER_MILLION
    return tokens / per_call * usd_per_call


@dataclass(frozen=True)
class Incident:
    """A kind of incident that makes workers re-read uncommitted events, and its monthly rate."""

    component: str
    label: str
    per_month: float
    instances_affected: int


def _incidents(design: Design, load: Load) -> list[Incident]:
    """Deploys restart every agent instance; a crash takes one; a rebalance revokes partitions.

    An eager rebalance (range, round_robin) revokes every member's partitions; cooperative-sticky
    moves only the partitions that change owner, about one member's share.
    """
    repeats = load.repeats
    days = load.days_per_month
    instances = design.consumers.agent.instances
    eager = design.consumers.agent.assignment.value != "cooperative_sticky"
    return [
        Incident("repeats_deploys", "deploys", repeats.deploys_per_day * days, instances),
        Incident(
            "repeats_worker_crashes", "worker crashes", repeats.worker_crashes_per_day * days, 1
        ),
        Incident(
            "repeats_rebalances",
            "rebalances",
            repeats.rebalances_per_day * days,
            instances if eager else min(instances, 1),
        ),
    ]


def uncommitted_per_instance(design: Design, scenario: Scenario) -> tuple[float, str]:
    """Agent events an instance has processed but not committed when it stops, and why.

    Commit after processing: at most one poll batch, ``max_poll_records`` (worked-numbers item 4:
    duplicates are bounded by the records handled since the last commit); priced at that bound.
    Auto-commit: the instance's share of the month's average agent event rate x the auto-commit
    interval. Commit before processing: none are re-read (they are lost instead).
    """
    group = design.consumers.agent
    delivery = design.delivery
    if delivery.commit is CommitMode.before_processing:
        return 0.0, "commit before processing re-reads nothing (the fetched events are lost)"
    if delivery.commit is CommitMode.after_processing:
        return float(
            group.max_poll_records
        ), f"one poll batch of max.poll.records {group.max_poll_records}"
    month = monthly_load(scenario.load)
    shape = model_calls_per_run(design, scenario.load)
    rate = month.runs_per_month * shape.model_calls / month.seconds_per_month
    per_instance = rate / max(group.instances, 1)
    interval_s = delivery.auto_commit_interval_ms / 1000
    return per_instance * interval_s, (
        f"auto-commit: {_num(per_instance)} agent events/s per instance x "
        f"{_num(interval_s)} s interval"
    )


def _repeat_blocker(design: Design) -> str | None:
    if design.delivery.dedupe is Dedupe.durable_same_transaction:
        return "durable dedupe in the same transaction skips the re-read events"
    if design.model.cache.enabled:
        return "the response cache answers the re-sent calls"
    return None


def repeat_lines(
    design: Design, scenario: Scenario, pricing: Pricing, metrics: Metrics | None = None
) -> list[CostLine]:
    """Tokens paid again a month, one line per kind of incident (see the module docstring)."""
    load = scenario.load
    shape = model_calls_per_run(design, load)
    price = pricing.model.price_for(design.model.primary.name, "primary")
    cached = pricing.model.repeat_input_cached_share
    simulated = _simulated_repeat_line(design, scenario, pricing, metrics) if metrics else None
    lines: list[CostLine] = []
    per_instance, why = uncommitted_per_instance(design, scenario)
    blocker = _repeat_blocker(design)
    for incident in _incidents(design, load):
        if simulated is not None and simulated.component == incident.component:
            continue
        events = incident.per_month * incident.instances_affected * per_instance
        head = (
            f"{_num(incident.per_month)} {incident.label}/month x "
            f"{_plural(incident.instances_affected, 'agent instance')} x {_num(per_instance)} "
            f"events uncommitted ({why})"
        )
        if blocker is not None or events == 0:
            lines.append(
                _line(incident.component, 0.0, f"{head}: $0, {blocker or 'nothing re-read'}")
            )
            continue
        tokens = events * shape.tokens_per_call
        lines.append(
            _line(
                incident.component,
                repeat_token_usd(tokens, shape, price, cached),
                f"{head} x {shape.tokens_per_call:,} tokens = {_num(tokens)} tokens paid again",
            )
        )
    if simulated is not None:
        lines.append(simulated)
    return lines


_OUTAGE_COMPONENT = "repeats_provider_outages"
"""The provider outage's repeats component: the incident whose fallback calls are billed."""

_INCIDENT_COMPONENT = {
    "worker_crash": "repeats_worker_crashes",
    "rebalance": "repeats_rebalances",
    "provider_outage": "repeats_provider_outages",
    "state_failover": "repeats_state_failovers",
    "broker_loss": "repeats_broker_losses",
    "consumer_pause": "repeats_consumer_pauses",
}


def incidents_per_month(scenario: Scenario) -> tuple[str, float, str] | None:
    """The scenario's first incident fault: its cost component, incidents a month and the rate used.

    worker_crash and rebalance use ``load.repeats`` per day x days; provider_outage uses the
    month's outage minutes / the fault's minutes; a kind the scenario gives no rate for counts once
    a month. Poison is a steady rate, not an incident: None when only steady faults are present.
    """
    repeats = scenario.load.repeats
    days = scenario.load.days_per_month
    for fault in scenario.faults:
        if fault.kind not in _INCIDENT_COMPONENT:
            continue
        if fault.kind == "worker_crash":
            per_day = repeats.worker_crashes_per_day
            per_month, rate = per_day * days, f"{_num(per_day)} crashes/day x {_num(days)} days"
        elif fault.kind == "rebalance":
            per_day = repeats.rebalances_per_day
            per_month, rate = per_day * days, f"{_num(per_day)} rebalances/day x {_num(days)} days"
        elif fault.kind == "provider_outage":
            minutes = fault.duration_seconds / 60
            outage = repeats.provider_outage_minutes_per_month
            per_month = outage / minutes
            rate = f"{_num(outage)} outage min/month / {_num(minutes)} min"
        else:
            per_month, rate = 1.0, "once a month (no rate in the scenario)"
        return _INCIDENT_COMPONENT[fault.kind], per_month, rate
    return None


def _simulated_repeat_line(
    design: Design, scenario: Scenario, pricing: Pricing, metrics: Metrics
) -> CostLine:
    shape = model_calls_per_run(design, scenario.load)
    price = pricing.model.price_for(design.model.primary.name, "primary")
    cached = pricing.model.repeat_input_cached_share
    repeated = metrics.tokens_repeated
    incident = incidents_per_month(scenario)
    if incident is not None:
        component, per_month, rate = incident
        tokens = repeated * per_month
        detail = (
            f"simulated in {scenario.name}: {repeated:,} tokens repeated per incident x "
            f"{_num(per_month)} incidents/month ({rate}) = {_num(tokens)} tokens"
        )
        return _line(component, repeat_token_usd(tokens, shape, price, cached), detail)
    month = monthly_load(scenario.load)
    month_calls = month.runs_per_month * shape.model_calls
    per_call = repeated / metrics.model_calls if metrics.model_calls else 0.0
    tokens = per_call * month_calls
    detail = (
        f"simulated in {scenario.name}: {repeated:,} tokens repeated over "
        f"{metrics.model_calls:,} model calls = {per_call:.4g} per call x "
        f"{_num(month_calls)} calls/month = {_num(tokens)} tokens"
    )
    return _line("repeats_steady", repeat_token_usd(tokens, shape, price, cached), detail)


def monthly_cost(
    design: Design,
    scenario: Scenario,
    pricing: Pricing,
    *,
    budget_usd: float,
    metrics: Metrics | None = None,
) -> Cost:
    """The design's monthly bill for the scenario's month of load, compared with ``budget_usd``.

    ``metrics`` (from ``simulator.simulate`` of this design and scenario) adds the simulated tokens
    paid again, scaled to a month; without it the bill is the closed form alone (for the live
    estimate). Returns a ``Cost`` whose ``lines`` hold the arithmetic, ``by_component`` the dollars
    per line and ``monthly_usd`` their sum, all in US dollars per month rounded to cents.
    """
    lines = (
        infrastructure_lines(design, scenario, pricing)
        + token_lines(design, scenario, pricing, metrics)
        + repeat_lines(design, scenario, pricing, metrics)
    )
    by_component: dict[str, float] = {}
    for line in lines:
        by_component[line.component] = round(
            by_component.get(line.component, 0.0) + line.monthly_usd, 2
        )
    total = round(sum(line.monthly_usd for line in lines), 2)
    return Cost(monthly_usd=total, budget_usd=budget_usd, by_component=by_component, lines=lines)
