"""Each check judges its own decision's consequence: the events a poison layer drops are the
poison events given up, not every lost event; a bound model limit is step 5's, named but not
charged again in step 7; step 13 judges the fallback by its own wait, not the lag's drain."""

from __future__ import annotations

import pytest

from app.grading.grader import grade, load_material
from simulator import simulate
from simulator.design import Design
from simulator.files import load_design
from tests.course.conftest import STEPS_DIR

MATERIAL = load_material(STEPS_DIR)
DESIGNS = STEPS_DIR / "designs"


def _steps(*ids: str):
    return [s for s in MATERIAL.loaded.steps if s.step is not None and s.step.id in ids]


@pytest.mark.parametrize("seed", [1, 2])
def test_losses_that_are_not_poison_are_not_called_dropped_poison(seed):
    """The starting design retries for ever and loses events to its commits: none of those is a
    poison event given up, so "no poison event is dropped" is not exercised (it failed with
    "145 poison events were dropped", reading metrics.lost)."""
    result = grade(Design(), MATERIAL, seed=seed, only=_steps("poison-messages"))
    (step,) = result.steps
    assert step.metrics is not None and step.metrics.lost > 0
    assert (step.metrics.poison_given_up, step.metrics.poison_dropped) == (0, 0)
    assert step.metrics.poison_still_holding
    checks = {c.id: c for c in step.checks}
    assert checks["poison-parked"].status == "not_exercised"
    assert "at least" in checks["retry-limited"].message


def test_poison_given_up_is_parked_or_dropped_by_the_dead_letter_queue():
    scenario = MATERIAL.loaded.scenarios["poison"]
    kept = simulate(load_design(DESIGNS / "reference.yaml"), scenario, 1).metrics
    assert kept.poison_given_up and kept.poison_dropped == 0
    assert kept.poison_given_up <= kept.dead_lettered
    dropped = simulate(load_design(DESIGNS / "bad/no-dead-letter-queue.yaml"), scenario, 1).metrics
    assert dropped.poison_given_up and dropped.poison_dropped == dropped.poison_given_up
    assert dropped.poison_dropped <= dropped.lost and dropped.dead_lettered == 0


def test_a_bound_model_limit_fails_step_5_and_is_only_named_in_step_7():
    design = load_design(DESIGNS / "reference.yaml")
    design.model.primary.tpm = 600_000  # 180 % of the peak's tokens a minute
    result = grade(design, MATERIAL, seed=1, only=_steps("agents-tools-model", "evening-peak"))
    checks = {(s.id, c.id): c for s in result.steps for c in s.checks}
    assert checks[("agents-tools-model", "model-capacity")].status == "fail"
    workers = checks[("evening-peak", "peak-utilisation")]
    assert workers.status == "pass"
    assert "TPM, 180 % used" in workers.message
    assert "step 5 is judged there" in workers.message


@pytest.mark.parametrize("seed", [1, 2])
def test_the_fallbacks_wait_tells_a_short_fallback_from_a_slow_drain(seed):
    scenario = MATERIAL.loaded.scenarios["provider-outage"]

    def wait(name: str) -> float | None:
        return simulate(load_design(DESIGNS / name), scenario, seed).metrics.fallback_wait_mean_s

    assert wait("reference.yaml") == pytest.approx(0.0, abs=0.05)
    assert wait("bad/too-few-partitions.yaml") == pytest.approx(0.0, abs=0.05)
    assert (wait("bad/small-fallback.yaml") or 0.0) > 5.0
    assert wait("bad/no-fallback.yaml") is None


@pytest.mark.parametrize("seed", [1, 2])
def test_a_slow_relays_bursts_are_step_2s_not_the_model_limits(seed):
    """A relay polling every 5 s makes calls wait at the gateway with the reference's limits
    (0.12-0.16 s, over step 5's 0.08 s): step 5 judges the wait without the relay and passes,
    saying what the relay added; 660 RPM for 600 wanted still fails it, with or without a relay."""
    slow = load_design(DESIGNS / "bad/slow-outbox-relay.yaml")
    scenario = MATERIAL.loaded.scenarios["peak"]
    metrics = simulate(slow, scenario, seed).metrics
    assert metrics.model_wait_mean_s > 0.08
    assert metrics.model_wait_without_relay_mean_s == 0.0
    result = grade(slow, MATERIAL, seed=seed, only=_steps("data-model", "agents-tools-model"))
    checks = {c.id: c for s in result.steps for c in s.checks}
    assert checks["outbox-relay-delay"].status == "fail"
    capacity = checks["model-capacity"]
    assert capacity.status == "pass"
    assert f"{metrics.model_wait_mean_s:.3f} s with the bursts of your outbox relay" in (
        capacity.message
    )
    low = load_design(DESIGNS / "bad/low-rpm.yaml")
    low_result = grade(low, MATERIAL, seed=seed, only=_steps("agents-tools-model"))
    assert {c.id: c.status for c in low_result.steps[0].checks}["model-capacity"] == "fail"
    low_metrics = simulate(low, scenario, seed).metrics
    assert low_metrics.model_wait_without_relay_mean_s is not None
    assert low_metrics.model_wait_without_relay_mean_s > 0.3


def test_the_wait_without_the_relay_is_not_measured_under_faults():
    scenario = MATERIAL.loaded.scenarios["worker-crash"]
    metrics = simulate(load_design(DESIGNS / "reference.yaml"), scenario, 1).metrics
    assert metrics.model_wait_without_relay_mean_s is None


@pytest.mark.parametrize("seed", [1, 2])
def test_step_4_judges_key_retention_on_a_replay_step_3s_offset_reset_cannot_skip(seed):
    """auto.offset.reset=latest or a 24 h log lose step 3's points, not step 4's as well: the
    dedupe records are judged on a replay an operator starts at the earliest offset (the old
    replay skipped everything with latest and found nothing to judge: "not exercised", 0/3)."""
    wanted = {
        "bad/offset-reset-latest.yaml": "pass",
        "bad/short-log-retention.yaml": "pass",
        "bad/short-key-retention.yaml": "fail",
        "reference.yaml": "pass",
    }
    for name, status in wanted.items():
        design = load_design(DESIGNS / name)
        result = grade(design, MATERIAL, seed=seed, only=_steps("exactly-once-effects"))
        check = {c.id: c for c in result.steps[0].checks}["key-retention-covers-replay"]
        assert (name, check.status, check.scenario) == (name, status, "rewind")
        if status == "pass":
            assert "none expired" in check.message


def test_the_fallbacks_utilisation_is_the_calls_due_over_its_smallest_ceiling():
    """The reference's fallback (1,500 RPM, 2.5M TPM, 96 at once) would carry the calls due at
    43 % of its tightest limit; the small fallback would need 200 %; workers kicked for a slow
    batch do not change the figure (their re-sent calls are step 9's storm, not the fallback's
    size)."""
    scenario = MATERIAL.loaded.scenarios["provider-outage"]

    def metrics(name: str):
        return simulate(load_design(DESIGNS / name), scenario, 1).metrics

    reference = metrics("reference.yaml")
    assert reference.fallback_utilisation == pytest.approx(0.432, abs=0.01)
    assert metrics("bad/small-fallback.yaml").fallback_utilisation == pytest.approx(2.0, abs=0.01)
    kicked = metrics("bad/short-poll-interval.yaml")
    assert kicked.members_kicked > 0
    assert kicked.fallback_utilisation == reference.fallback_utilisation
    assert metrics("bad/no-fallback.yaml").fallback_utilisation is None


@pytest.mark.parametrize("seed", [1, 3])
def test_a_rebalance_storms_re_sent_calls_do_not_fail_the_fallback(seed):
    """A 1 s max.poll.interval.ms kicks workers over and over; their re-sent calls queue at the
    fallback for a minute and more (seeds 1 and 3). Step 9 judges that storm; step 13 passes a
    fallback the calls due need less than all of, and says why the wait is long."""
    design = load_design(DESIGNS / "bad/short-poll-interval.yaml")
    metrics = simulate(design, MATERIAL.loaded.scenarios["provider-outage"], seed).metrics
    assert metrics.fallback_wait_mean_s is not None and metrics.fallback_wait_mean_s > 10
    result = grade(design, MATERIAL, seed=seed, only=_steps("provider-outage"))
    check = {c.id: c for c in result.steps[0].checks}["outage-runs-keep-moving"]
    assert check.status == "pass"
    assert f"workers were kicked {metrics.members_kicked:,} times" in check.message
    assert "need 43 % of the fallback's capacity" in check.message
    small = grade(
        load_design(DESIGNS / "bad/small-fallback.yaml"),
        MATERIAL,
        seed=seed,
        only=_steps("provider-outage"),
    )
    failed = {c.id: c for c in small.steps[0].checks}["outage-runs-keep-moving"]
    assert failed.status == "fail"
    assert "need 200 % of the fallback's capacity" in failed.message
