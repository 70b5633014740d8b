"""A check's text says what the run shows and points at the decision at fault: a reviewer found
"expired and were compensated" beside "no compensation ran", "each stopped every partition" for
a cooperative assignment, and hints recommending the value already chosen."""

from __future__ import annotations

from tests.course.test_failing_texts import _reference, _step, _with


def _check(design, step_id: str, check_id: str):
    return next(c for c in _step(design, step_id).checks if c.id == check_id)


def test_step_10_an_expired_approval_is_said_compensated_only_when_compensation_runs():
    """With compensation "left as they are" the check said approvals "expired and were
    compensated (0 held)" beside "21 failed sagas were left half done ... no compensation ran"."""
    design = _with(
        _reference(), **{"tools.saga.compensation_order": "none", "tools.saga.enabled": False}
    )
    check = _check(design, "compensation", "approval-deadline")
    assert check.status == "pass"
    assert "compensated" not in check.message.replace("no compensation", "")
    assert "expires after 24 h" in check.message
    assert "left as they are" in check.message
    assert "The 480 s run is shorter than the deadline, so it shows none expire" in check.message


def test_step_10_a_deadline_longer_than_the_month_is_not_passed():
    """A year's deadline passed "expired and were compensated" in a 480 s run."""
    design = _with(_reference(), **{"tools.saga.approval_deadline_hours": 8760})
    check = _check(design, "compensation", "approval-deadline")
    assert check.status == "not_exercised"
    assert "8,760 h is longer than the 720 h month" in check.message
    assert "cannot see it expire" in check.message


def test_step_9_a_cooperative_deploy_names_the_partitions_each_restart_moves():
    """With cooperative sticky chosen and 4,096 partitions over 8 instances the failure said "each
    stopped every partition" and hinted "Cooperative sticky assignment moves only what must
    move"."""
    design = _with(_reference(), **{"event_log.partitions": 4096})
    check = _check(design, "worker-crash", "deploy-moves-few-partitions")
    assert check.status == "fail"
    assert "every partition" not in check.message
    assert "512 partitions a restart (4,096 over 8 instances)" in check.message
    assert "Cooperative sticky" not in check.hint
    assert "fewer partitions per instance" in check.hint
    eager = _with(_reference(), **{"consumers.agent.assignment": "range"})
    check = _check(eager, "worker-crash", "deploy-moves-few-partitions")
    assert check.status == "fail"
    assert "each stopped every one of the 96 partitions (range assignment)" in check.message
    assert check.hint == "Cooperative sticky assignment moves only what must move."


def test_step_13_a_breaker_that_tries_every_second_is_hinted_at_its_open_interval():
    """Threshold 5, open 1 s: the failure hinted "A circuit breaker that opens after a handful of
    failures", the threshold already chosen, though the trial calls (up to 600) were the cause."""
    design = _with(_reference(), **{"model.circuit_breaker.open_seconds": 1})
    check = _check(design, "provider-outage", "breaker-opens-fast")
    assert check.status == "fail"
    assert "trial call through every 1 s, up to 600 in the 600 s outage" in check.message
    assert check.hint.startswith("A longer open interval: at 1 s")
    assert "11 s or more" in check.hint
    design = _with(_reference(), **{"model.circuit_breaker.failure_threshold": 1000})
    check = _check(design, "provider-outage", "breaker-opens-fast")
    assert check.status == "fail"
    assert check.hint.startswith("A failure threshold of a handful: 1,000 failures")


def test_step_3_a_retention_shorter_than_the_pause_is_named_and_hinted():
    """Retention 1 h, reset none: the failure never named the retention against the 48 h pause
    and the hint recommended auto.offset.reset none, already chosen."""
    design = _with(
        _reference(), **{"event_log.retention_hours": 1, "event_log.auto_offset_reset": "none"}
    )
    check = _check(design, "event-log", "offset-reset-safe")
    assert check.status == "fail"
    assert "the log keeps events 1 h, shorter than the group's 48 h pause" in check.message
    assert check.hint.startswith("Keep events longer than a group can be away")
    assert "above 48 h (now 1 h); auto.offset.reset none already" in check.hint


def test_step_3_a_ratio_over_its_limit_never_reads_as_the_limit():
    """arrival_timestamp key: "FAIL ... 1.6 x its critical path" beside "(want 1.6 x at most)"
    for a median 35.3 s over a 21.4 s critical path (1.65 x)."""
    from types import SimpleNamespace

    from app.checks.explanations import render_explanation
    from app.checks.names import FUNCTIONS
    from tests.course.test_failing_texts import _material

    (step,) = [s.step for s in _material().loaded.steps if s.step and s.step.id == "event-log"]
    check = next(c for c in step.checks if c.id == "key-keeps-task-order")
    metrics = SimpleNamespace(
        order_violations_task=0, run_latency_p50_s=35.3, run_critical_path_s=21.4
    )
    names = {"design": _reference(), "metrics": metrics, **FUNCTIONS}
    text = render_explanation(check.fail_message, names)
    assert "1.65 x its critical path (want 1.6 x at most)" in text, text
    metrics.run_latency_p50_s = 34.2
    assert "1.598 x its critical path." in render_explanation(check.pass_message, names)


def test_step_9_a_poll_smaller_than_the_partitions_is_said_as_it_is():
    """max.poll.records 1, interval 1 s: "a full poll of 1 records shared by the 12 partitions
    ... gives each 1 record", and a hint for fewer records per poll, already 1. The form's
    shortest interval stays within the replay's simulation budget, so it is judged."""
    design = _with(
        _reference(),
        **{"consumers.agent.max_poll_records": 1, "consumers.agent.max_poll_interval_ms": 1000},
    )
    check = _check(design, "worker-crash", "no-rebalance-storm")
    assert check.status == "fail"
    assert "1 records" not in check.message
    assert (
        "polls fetched up to 1 record a partition (max.poll.records 1, fewer than the 12 "
        "partitions a worker works at once, still gives each one), about 2.0 s of 2.0 s calls "
        "against max.poll.interval.ms's 1 s; the longest batch ran " in check.message
    )
    took = float(check.message.split("the longest batch ran ")[1].split(" s")[0])
    assert took > 1.0, check.message
    assert check.hint.startswith("A longer max.poll.interval.ms: 1 s is not enough")


def test_step_13_calls_still_on_the_fallback_at_the_end_are_said_at_least():
    """Open 3,600 s: "Calls kept going to the fallback 120 s after the primary was back", where
    120 s is only where the 900 s run ended (the outage ends at 780 s)."""
    design = _with(_reference(), **{"model.circuit_breaker.open_seconds": 3600})
    check = _check(design, "provider-outage", "breaker-closes")
    assert check.status == "fail"
    assert "at least 120 s after the primary was back (until the end of the run)" in check.message
    assert "3,600 s open" in check.message
    assert "3,600 s can keep calls on the fallback" in check.hint


def test_step_3_a_loss_with_acks_0_is_not_called_acknowledged():
    """acks=0: "The broker loss took 6 acknowledged events from the log", though with acks=0
    nothing is acknowledged."""
    design = _with(_reference(), **{"event_log.acks": "0", "event_log.enable_idempotence": False})
    check = _check(design, "event-log", "broker-loss-nothing-lost")
    assert check.status == "fail"
    assert "acknowledged event" not in check.message
    assert "written event" in check.message and "with acks=0 no write is acknowledged" in (
        check.message
    )
    assert "acks=0" in check.hint


def test_step_4_expired_dedupe_records_are_named_with_the_retention():
    """Retention 0 h: "16 of 52 redelivered events applied their effects a second time" hinted
    "Insert the event id in the effect's transaction", which the design already does."""
    design = _with(_reference(), **{"delivery.dedupe_key_retention_hours": 0})
    check = _check(design, "exactly-once-effects", "crash-no-duplicate-effect")
    assert check.status == "fail"
    assert "dedupe record already expired, processed event ids being kept 0 h" in check.message
    assert check.hint.startswith("Keep processed event ids longer than an event can come back")
    assert "(now 0 h)" in check.hint


def test_step_2_the_outbox_pass_claims_no_publish_the_run_did_not_see():
    """Relay poll 600,000 ms: "Every crashed worker's last step was published" beside "500 runs
    unfinished at the end"."""
    design = _with(_reference(), **{"data_model.outbox_relay_poll_interval_ms": 600000})
    check = _check(design, "data-model", "outbox")
    assert check.status == "pass"
    assert "was published" not in check.message
    assert "No crashed worker's committed step lost its next event (0 lost)" in check.message
    assert "500 runs were unfinished when the window ended, none for a lost publish" in (
        check.message
    )


def test_step_5_a_ttl_shorter_than_the_wait_is_named():
    """TTL 0.01 h: "17 calls abandoned by the crash were paid again" never named the 36 s TTL
    against the 180 s the calls waited."""
    design = _with(_reference(), **{"model.cache.ttl_hours": 0.01})
    check = _check(design, "agents-tools-model", "response-cache")
    assert check.status == "fail"
    assert (
        "the cache keeps an answer 36 s (0.01 h), shorter than the 180 s the calls waited"
        in check.message
    )
    assert check.hint.startswith("A TTL longer than the 180 s wait before a repeat (now 36 s)")
