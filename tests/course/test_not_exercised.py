"""A check over an empty set is not exercised, never a pass: a design with zero agent instances
makes no model call and processes no agent step, so the course's checks over model calls and
agent latency score nothing for it (they said "0 calls, 0 refused" and passed before)."""

from __future__ import annotations

from app.grading.grader import grade, load_material
from simulator.design import Dedupe
from simulator.files import load_design
from tests.course.conftest import STEPS_DIR

OVER_MODEL_CALLS = {
    ("evening-peak", "peak-utilisation"),
    ("checkpoints", "crash-rework-bounded"),
    ("worker-crash", "deploy-moves-few-partitions"),
    ("poison-messages", "poison-parked"),
    ("poison-messages", "retry-limited"),
    ("state-failover", "failover-automatic"),
    ("provider-outage", "outage-runs-keep-moving"),
    ("provider-outage", "breaker-opens-fast"),
    ("provider-outage", "breaker-closes"),
}
"""Checks of the steps from the one that decides the agent instances (step 7) on: the steps
before it judge the reference's instances (a step judges only what has been decided by then)."""


def test_zero_agent_instances_do_not_pass_the_checks_over_model_calls() -> None:
    material = load_material(STEPS_DIR)
    reference = load_design(STEPS_DIR / material.course.reference_design)
    agent = reference.consumers.agent.model_copy(update={"instances": 0})
    design = reference.model_copy(
        update={"consumers": reference.consumers.model_copy(update={"agent": agent})}
    )
    result = grade(design, material, seed=1)
    idle = {(s.id, c.id) for s in result.steps for c in s.checks if c.status == "not_exercised"}
    assert idle >= OVER_MODEL_CALLS
    checks = {(s.id, c.id): c for s in result.steps for c in s.checks}
    assert all(checks[key].points == 0 for key in idle)
    assert checks[("checkpoints", "crash-rework-bounded")].message == (
        "Not exercised: no model call was made: nothing to judge."
    )
    assert not [key for key, c in checks.items() if c.status == "error"]
    assert result.status == "fail"


def _step_checks(design, step_id: str) -> dict:
    """The checks of one step of the course for ``design``, by id (the step graded alone)."""
    material = load_material(STEPS_DIR)
    loaded = [s for s in material.loaded.steps if s.step is not None and s.step.id == step_id]
    (step,) = grade(design, material, only=loaded).steps
    return {c.id: c for c in step.checks}


def _known_bad(name: str):
    return load_design(STEPS_DIR / "designs" / "bad" / f"{name}.yaml")


def test_checks_over_what_a_design_never_does_are_not_exercised():
    """No dedupe record, no compensation, nothing parked, no call on the fallback: the checks that
    judge those say so instead of passing over none (they passed with "0 expired", "0
    compensations ran in order", "0 parked", "back on the primary 0 s after")."""
    cases = [
        ("no-compensation", "compensation", "saga-reverse-compensation", "no compensation ran"),
        ("no-dead-letter-queue", "poison-messages", "parked-key-keeps-order", "nothing was parked"),
        ("unlimited-retry", "poison-messages", "poison-parked", "no poison event was given up"),
        ("no-fallback", "provider-outage", "breaker-closes", "no call went to the fallback"),
        ("no-outbox", "data-model", "outbox-relay-delay", "there is no outbox, so no relay"),
        (
            "no-response-cache",
            "agents-tools-model",
            "cache-by-version",
            "there is no response cache, so no cached answer",
        ),
        (
            "no-dead-letter-queue",
            "poison-messages",
            "dlq-watched",
            "there is no dead-letter topic to watch",
        ),
    ]
    for name, step_id, check_id, missing in cases:
        check = _step_checks(_known_bad(name), step_id)[check_id]
        assert check.status == "not_exercised", (name, check_id, check.message)
        assert check.message.startswith(f"Not exercised: {missing}"), check.message
        assert check.hint == "", (name, check_id, check.hint)


def test_a_replay_without_durable_dedupe_records_fails_the_retention_check():
    """Records kept in memory are lost in the restart, and without dedupe there are none: the
    replay applies every applied event it reads again a second time. The retention check judges
    that consequence (it said "not exercised" beside "3,490 effects ran twice", and pointed at a
    check that sees only the crash's redeliveries)."""
    material = load_material(STEPS_DIR)
    loaded = [s for s in material.loaded.steps if s.step is not None]
    step = next(s for s in loaded if s.step.id == "exactly-once-effects")
    why = {
        "in-memory-dedupe": "the dedupe records were kept in the worker's memory and lost in the "
        "restart",
        "no-dedupe": "no dedupe record is kept at all",
    }
    for name, reason in why.items():
        (result,) = grade(_known_bad(name), material, seed=1, only=[step]).steps
        check = next(c for c in result.checks if c.id == "key-retention-covers-replay")
        assert check.status == "fail", (name, check.message)
        twice = check.explanation.split("; ")[-1].split(" effect")[0]
        assert int(twice.replace(",", "")) > 1_000, check.explanation
        assert check.message == (
            f"The replay applied {twice} effects a second time: {reason}, so none of the "
            f"{twice} events read again was recognised."
        ), check.message


def _without(reference, **model_sections):
    model = reference.model.model_copy(update=model_sections)
    return reference.model_copy(update={"model": model})


def test_an_outage_with_neither_breaker_nor_fallback_is_judged_by_its_calls():
    """Every call of the outage tries the dead primary and none is answered: the breaker check
    fails on the calls the primary refused (the run's primary_failures, each also unanswered),
    the fallback check names the missing fallback, and no call came back from a fallback it
    never reached."""
    material = load_material(STEPS_DIR)
    reference = load_design(STEPS_DIR / material.course.reference_design)
    bare = _without(
        reference,
        fallback=reference.model.fallback.model_copy(update={"enabled": False}),
        circuit_breaker=reference.model.circuit_breaker.model_copy(update={"enabled": False}),
    )
    checks = _step_checks(bare, "provider-outage")
    moving, opens, closes = (
        checks[c] for c in ("outage-runs-keep-moving", "breaker-opens-fast", "breaker-closes")
    )
    assert moving.status == "fail" and "with no fallback provider" in moving.message
    assert "drained" not in moving.message
    assert opens.status == "fail" and "with no circuit breaker" in opens.message
    assert not opens.message.startswith("0 calls")
    assert closes.status == "not_exercised"
    loaded = [
        s for s in material.loaded.steps if s.step is not None and s.step.id == "provider-outage"
    ]
    metrics = grade(bare, material, only=loaded).steps[0].metrics
    assert metrics.primary_failures == metrics.outage_calls_unanswered > 0


def test_a_peak_over_the_tpm_bought_fails_the_model_capacity_check():
    """TPM bought for 93 % of the peak's tokens: calls may wait little at the gateway, but the
    check fails and says by how much the peak exceeds the limit (it passed, reading 108 %)."""
    material = load_material(STEPS_DIR)
    reference = load_design(STEPS_DIR / material.course.reference_design)
    short = _without(
        reference, primary=reference.model.primary.model_copy(update={"tpm": 1_000_000})
    )
    check = _step_checks(short, "agents-tools-model")["model-capacity"]
    assert check.status == "fail"
    assert check.message.startswith("The peak needs 108 % of the TPM you bought")


def test_a_crash_that_loses_instead_of_redelivering_does_not_pass_the_dedupe_check():
    """Auto-commit and no dedupe: the crash loses 36 fetched events and redelivers none, so the
    duplicate-effect check has nothing to judge (it passed, "0 events were redelivered; 0 effects
    ran twice", for a design with no dedupe at all)."""
    design = _known_bad("auto-commit")
    design = design.model_copy(
        update={"delivery": design.delivery.model_copy(update={"dedupe": Dedupe.none})}
    )
    check = _step_checks(design, "exactly-once-effects")["crash-no-duplicate-effect"]
    assert check.status == "not_exercised" and check.points == 0
    assert "no event was redelivered after the crash" in check.message
    assert "lost instead" in check.message
