"""A failing check's text is computed from the run and adds up: its figures are the same
quantities as the ones beside them, and it names the binding constraint with its numbers (a
learner found "17 retried, 3 redelivered" beside 18 repeats, a 15 s pause evicted with no word of
the 6 s timeout, and "write capacity 80 %" beside 15.3 of 25 writes/s)."""

from __future__ import annotations

import re
from functools import cache

from app.course.choices import bundled
from app.course.design_fields import design_field, get_value, with_values
from app.grading.grader import CourseMaterial, grade, load_material
from simulator.design import Design
from simulator.files import load_design
from tests.course.conftest import STEPS_DIR


@cache
def _material() -> CourseMaterial:
    return load_material(STEPS_DIR)


def _reference() -> Design:
    return load_design(STEPS_DIR / _material().course.reference_design)


def _with(design: Design, **values: object) -> Design:
    """``design`` with dotted fields set: ``_with(d, **{"tools.runners": 2})``."""
    return with_values(design, values)


def _step(design: Design, step_id: str):
    loaded = [s for s in _material().loaded.steps if s.step is not None and s.step.id == step_id]
    (step,) = grade(design, _material(), seed=1, only=loaded).steps
    return step


def _numbers(text: str) -> list[float]:
    return [float(n.replace(",", "")) for n in re.findall(r"\d[\d,]*(?:\.\d+)?", text)]


def test_step_10_tool_key_options_are_distinct_design_values_and_one_is_held():
    """Two options shared ``event_id``, so the starting design (random keys, none sent) held
    none of them and the form showed nothing selected."""
    (step,) = [s.step for s in _material().loaded.steps if s.step and s.step.id == "compensation"]
    start = Design()
    for decision in step.decisions:
        if not decision.choices or bundled(decision):
            continue
        field = design_field(decision.field)
        values = [
            field.coerce(c.value) if isinstance(c.value, str) else c.value for c in decision.choices
        ]
        assert len(set(values)) == len(values), decision.field
        assert values.count(get_value(start, decision.field)) == 1, decision.field
    fields = {d.field for d in step.decisions}
    assert {"tools.side_effect_idempotency_key", "delivery.idempotency_key_from"} <= fields


def test_step_10_repeated_tool_calls_add_up_by_cause():
    start = Design()
    design = _with(
        _reference(),
        **{
            "tools.side_effect_idempotency_key": start.tools.side_effect_idempotency_key,
            "delivery.idempotency_key_from": start.delivery.idempotency_key_from.value,
        },
    )
    step = _step(design, "compensation")
    check = next(c for c in step.checks if c.id == "side-effect-keys")
    assert check.status == "fail"
    metrics = step.metrics
    assert metrics is not None and metrics.tool_retries_after_effect > 0
    total, retried, again, redelivered = _numbers(check.message)[:4]
    assert total == metrics.duplicate_effects
    assert retried == metrics.tool_retries_after_effect
    assert retried + again == total, check.message
    assert again <= redelivered == metrics.redelivered


def test_step_9_failures_state_the_binding_numbers():
    short = _with(_reference(), **{"consumers.agent.session_timeout_ms": 6000})
    check = next(c for c in _step(short, "worker-crash").checks if c.id == "pause-not-evicted")
    assert check.status == "fail"
    assert "session.timeout.ms is 6 s, shorter than the pause" in check.message
    slow = _with(
        _reference(),
        **{"consumers.agent.max_poll_records": 500, "consumers.agent.max_poll_interval_ms": 60000},
    )
    check = next(c for c in _step(slow, "worker-crash").checks if c.id == "no-rebalance-storm")
    assert check.status == "fail"
    assert (
        "polls fetched up to 41 records a partition (max.poll.records 500 shared by the 12 "
        "partitions a worker works at once), about 82 s of 2.0 s calls against "
        "max.poll.interval.ms's 60 s; the longest batch ran 6" in check.message
    )


def test_step_9_the_storm_text_sizes_batches_by_the_backlog_seen():
    """A 10,000-record poll over the 12 partitions a worker works at once is 833 records a
    partition, and the replay's backlog fills it (it did not at 0.02 events/s: about 36 events a
    partition, no batch outlasted 300 s and the design passed): the text gives the poll the run
    fetched, its work and the longest batch, cut short by the kick."""
    huge = load_design(STEPS_DIR / "designs" / "bad" / "huge-poll-batch.yaml")
    step = _step(huge, "worker-crash")
    check = next(c for c in step.checks if c.id == "no-rebalance-storm")
    assert check.status == "fail"
    assert (
        "polls fetched up to 833 records a partition (max.poll.records 10,000 shared by the 12 "
        "partitions a worker works at once), about 1,666 s of 2.0 s calls against "
        "max.poll.interval.ms's 300 s; the longest batch ran 3" in check.message
    )
    kicked, rebalances = _numbers(check.message)[:2]
    assert kicked > 100 and rebalances == 2 * kicked + 1  # the return from the pause: one more
    assert "the backlog fills the polls: 833 records a partition" in check.explanation
    # Fewer partitions a worker: a poll allows more than the backlog holds, and the text says so.
    few = _with(
        huge, **{"consumers.agent.instances": 48, "consumers.agent.concurrency_per_instance": 2}
    )
    check = next(c for c in _step(few, "worker-crash").checks if c.id == "no-rebalance-storm")
    assert check.status == "fail"
    assert "(all the backlog held; max.poll.records 10,000 would allow 5,000)" in check.message
    assert "the backlog is smaller than a poll" in check.explanation


def test_step_7_percentages_and_rates_are_the_same_quantity():
    design = load_design(STEPS_DIR / "designs" / "bad" / "small-state-store.yaml")
    step = _step(design, "evening-peak")
    check = next(c for c in step.checks if c.id == "tool-fleet-fits")
    assert check.status == "fail"
    percent, offered, capacity = re.search(
        r"writes use (\d+) % of its capacity \(([\d.]+) of ([\d,]+) writes/s", check.message
    ).groups()
    assert round(100 * float(offered) / float(capacity.replace(",", ""))) == int(percent)


def test_step_5_following_the_capacity_hint_passes():
    """The hint said 20 % above the peak's mean RPM and TPM; that still waited 0.19-0.33 s. It
    names the tightest limit (the reference's is TPM) and says twice the peak's mean."""
    reference = _reference()
    check = next(
        c for c in _step(reference, "agents-tools-model").checks if c.id == "model-capacity"
    )
    assert check.hint.startswith("Buy about twice the peak's mean TPM (now 2,500,000")
    per_minute = 10 * 60  # 0.5 runs/s x 20 model calls (steps/scenarios/peak.yaml)
    primary = reference.model.primary.model_copy(
        update={"rpm": 2 * per_minute, "tpm": 2 * per_minute * 1800}
    )
    doubled = reference.model_copy(
        update={"model": reference.model.model_copy(update={"primary": primary})}
    )
    check = next(c for c in _step(doubled, "agents-tools-model").checks if c.id == "model-capacity")
    assert check.status == "pass", check.message


def test_step_5_a_limit_over_the_peak_says_what_the_run_itself_saw():
    """The starting design's TPM is 108 % of the full peak, but the 10-minute run's calls reach the
    gateway slower (the runs wait for their earlier steps) and wait 0.054 s: the failure says both,
    so "calls fall further behind" does not stand beside a wait under the target unexplained."""
    step = _step(Design(), "agents-tools-model")
    check = next(c for c in step.checks if c.id == "model-capacity")
    assert check.status == "fail"
    assert "so at the full peak calls fall further behind" in check.message
    wait = re.search(r"mean wait at the gateway for your limits ([0-9.]+) s", check.explanation)
    assert wait is not None
    assert f"and a call waited {wait.group(1)} s on average" in check.message, check.message
    assert "calls/s reached the gateway" in check.message


def test_step_11_a_rebuild_without_an_append_only_log_says_why_nothing_was_rebuilt():
    """Rebuilding from the log needs step 2's append-only event log: without it the failover's
    missing writes are lost, and the failure says so instead of "rebuilt 0" unexplained."""
    design = _with(
        load_design(STEPS_DIR / "designs" / "bad" / "async-no-rebuild.yaml"),
        **{
            "data_model.state_rebuildable_from_log": True,
            "data_model.append_only_event_log": False,
        },
    )
    check = next(
        c for c in _step(design, "state-failover").checks if c.id == "failover-no-lost-writes"
    )
    assert check.status == "fail"
    assert "step 2's log is not append-only, so it does not hold them" in check.message
    assert "(rebuild from the log: on; append-only event log, step 2: off)" in check.explanation


def test_a_token_budget_below_the_plan_fails_the_fan_out_check_with_its_numbers():
    """A budget under the plan's 36,000 tokens stops each run's research (it passed as "spent
    25,200 tokens", under the plan, and cut the bill); one under a run's least is named as
    spent anyway (14,400 tokens against a 1,000 budget)."""
    budget = "orchestration.token_budget_per_run"
    cut = _step(_with(_reference(), **{budget: 30000}), "orchestration")
    check = {c.id: c for c in cut.checks}["fan-out-capped"]
    assert check.status == "fail"
    assert check.message.startswith("A run made 14 of its 20 planned model calls (25,200 tokens)")
    assert "its token budget, 30,000, is below the plan's 36,000 tokens" in check.message
    assert "a little above the plan's 36,000 tokens" in check.hint
    tiny = _step(_with(_reference(), **{budget: 1000}), "orchestration")
    message = {c.id: c for c in tiny.checks}["fan-out-capped"].message
    assert "A run made 8 of its 20 planned model calls (14,400 tokens)" in message
    assert "spends more than the budget anyway" in message
    single = _step(
        _with(_reference(), **{"orchestration.pattern": "single_agent"}), "orchestration"
    )
    assert {c.id: c for c in single.checks}["fan-out-capped"].status == "pass"


def test_a_failover_by_hand_is_never_as_quick_as_its_time_to_promote_says():
    """By hand with 35 s to promote passed the RTO check (writes back in 35 s): the mode changed
    nothing. Someone must be paged first, so writes are down 300 s, and the text says why."""
    step = _step(_with(_reference(), **{"state_store.failover": "manual"}), "state-failover")
    check = {c.id: c for c in step.checks}["failover-automatic"]
    assert check.status == "fail"
    refused = _numbers(check.message)[0]
    assert 290 <= refused <= 300, check.message
    assert "by hand, 300 s (the on-call engineer is paged first, so not the 35 s" in (
        check.explanation
    )
    assert check.hint.startswith("Fail over automatically")


def test_dedupe_records_kept_shorter_than_the_log_fail_the_replay():
    """The rewind replays everything the log keeps (167 h of a week's retention): ids kept 49 h
    meet older events and apply them again (it replayed 48 h, so 49 h passed as 'none
    expired')."""
    design = _with(_reference(), **{"delivery.dedupe_key_retention_hours": 49})
    check = {c.id: c for c in _step(design, "exactly-once-effects").checks}[
        "key-retention-covers-replay"
    ]
    assert check.status == "fail"
    expired = _numbers(check.message)[0]
    assert expired > 5000, check.message
    assert "after 167 h (log retention 168 h)" in check.explanation
