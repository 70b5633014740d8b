"""Pause and replay (issue item 3, worked item 5): a group away for 48 h finds its offsets gone;
auto.offset.reset decides between a replay that meets expired dedupe keys, a silent skip and an
error. An event every 20 s into the agent group for 52 h, the group paused at 1 h for 48 h with
offsets kept 24 h: 180 events applied before it (the one written at 1 h reaches the log through
the reference's outbox relay 0.1 s later, after the group paused)."""

from __future__ import annotations

import pytest

from simulator import simulate
from simulator.closed_forms.replay import pause_replay_estimate
from simulator.design import Design
from simulator.faults.rebalance import SlowBatches, SlowBatchKicks
from simulator.result import Metrics
from simulator.scenario import ConsumerPause, Scenario
from tests.simulator.faults.builders import reference, run, single_stage

APPLIED_BEFORE = 180  # events written at 0, 20, ..., 3580 s
ARRIVED_WHILE_AWAY = 8640  # events written at 3600, ..., 176380 s (published 0.1 s later)
PAUSE = {
    "kind": "consumer_pause",
    "at_seconds": 3600,
    "duration_seconds": 48 * 3600,
    "offsets_retention_hours": 24,
    "operator_response_seconds": 900,
}


def replay_scenario(**pause: object) -> Scenario:
    """0.05 step events/s for 52 h, 2 s steps, evenly spaced; the pause at 1 h for 48 h."""
    return single_stage(0.05, 52 * 3600, 2.0, [{**PAUSE, **pause}])


def replay(design: Design, **pause: object) -> Metrics:
    return simulate(design, replay_scenario(**pause)).metrics


def test_reference_replays_from_earliest_after_the_error_and_dedupe_absorbs_it() -> None:
    """auto.offset.reset=none: every partition raises, the operator resets to earliest 900 s
    later; dedupe records are kept 192 h, so all 180 replayed events are recognised."""
    d = reference()
    sim, result = run(d, replay_scenario())
    m = result.metrics
    partitions = sum(1 for part in sim.engine.groups["agent"].parts if part.n)
    assert m.offset_reset_errors == partitions > 0
    assert (m.lost, m.duplicate_effects) == (0, 0)
    assert m.redelivered == APPLIED_BEFORE
    assert m.dedupe_skipped == APPLIED_BEFORE
    [window] = result.fault_windows
    assert (window.start_s, window.end_s) == (3600.0, 3600.0 + 48 * 3600 + 900)


def test_keys_kept_24_hours_are_gone_when_the_48_hour_replay_arrives() -> None:
    m = replay(reference(delivery={"dedupe_key_retention_hours": 24}))
    assert m.duplicate_effects == APPLIED_BEFORE
    assert m.lost == 0
    # The replay runs at 49 h 15 min (the operator's 900 s): keys kept 49 h miss the first 15 min.
    partly = replay(reference(delivery={"dedupe_key_retention_hours": 49}))
    assert partly.duplicate_effects == 900 // 20
    kept = replay(reference(delivery={"dedupe_key_retention_hours": 50}))
    assert kept.duplicate_effects == 0


def test_no_dedupe_repeats_every_replayed_effect() -> None:
    m = replay(reference(delivery={"dedupe": "none"}))
    assert m.duplicate_effects == APPLIED_BEFORE


def test_latest_skips_every_event_that_arrived_while_away_silently() -> None:
    m = replay(reference(event_log={"auto_offset_reset": "latest"}))
    assert m.lost == m.offset_reset_skipped == ARRIVED_WHILE_AWAY
    assert (m.duplicate_effects, m.offset_reset_errors, m.redelivered, m.log_lost) == (0, 0, 0, 0)


def test_earliest_replays_at_once_without_an_error() -> None:
    m = replay(reference(event_log={"auto_offset_reset": "earliest"}))
    assert (m.offset_reset_errors, m.lost, m.duplicate_effects, m.offset_reset_skipped) == (0,) * 4
    assert m.redelivered == APPLIED_BEFORE


def test_offsets_still_held_resume_from_the_committed_position() -> None:
    """Offsets kept 7 days (Kafka 2.0 and later): nothing expires, nothing is replayed, nothing
    is lost, even without dedupe and with auto.offset.reset=latest."""
    d = reference(delivery={"dedupe": "none"}, event_log={"auto_offset_reset": "latest"})
    m = replay(d, offsets_retention_hours=168)
    assert (m.lost, m.duplicate_effects, m.redelivered, m.offset_reset_errors) == (0, 0, 0, 0)
    assert m.processed == m.arrivals


def test_events_deleted_by_retention_before_the_group_read_them_are_lost() -> None:
    """A 24 h log and a 48 h pause: the group's committed offset is out of range; earliest starts
    at the oldest event left, and the events written in [3600, 90000) s were deleted unread."""
    d = reference(event_log={"retention_hours": 24, "auto_offset_reset": "earliest"})
    m = replay(d, offsets_retention_hours=168)
    assert m.lost == m.offset_reset_skipped == (89_980 - 3600) // 20 + 1
    assert m.duplicate_effects == 0


@pytest.mark.parametrize(
    ("changes", "replayed", "duplicates", "lost", "error"),
    [
        ({}, 180, 0, 0, True),
        ({"delivery": {"dedupe_key_retention_hours": 24}}, 180, 180, 0, True),
        ({"event_log": {"auto_offset_reset": "latest"}}, 0, 0, 8640, False),
    ],
)
def test_the_closed_form_agrees_with_the_simulation(
    changes: dict[str, dict[str, object]], replayed: int, duplicates: int, lost: int, error: bool
) -> None:
    """Rates times times: 0.05/s x 3600 s applied before the pause, 0.05/s x 172800 s away."""
    d = reference(**changes)
    est = pause_replay_estimate(d, 0.05, 16.0, ConsumerPause.model_validate(PAUSE))
    assert est.replayed == pytest.approx(replayed)
    assert est.duplicate_effects == pytest.approx(duplicates)
    assert est.lost == pytest.approx(lost)
    assert est.offset_reset_error is error
    m = replay(d)
    assert m.duplicate_effects == pytest.approx(est.duplicate_effects, abs=1)
    assert m.lost == pytest.approx(est.lost, abs=1)


def test_the_closed_form_covers_two_days_at_the_evening_peak() -> None:
    """48 h at 36 step events/s is 6.2 million events: the estimate needs no simulation."""
    pause = ConsumerPause.model_validate(PAUSE)
    est = pause_replay_estimate(reference(delivery={"dedupe": "none"}), 36.0, 48.0, pause)
    assert est.replayed == pytest.approx(36.0 * 3600)
    assert est.duplicate_effects == pytest.approx(36.0 * 3600)
    backlog = 36.0 * (48 * 3600 + 900)
    assert est.backlog == pytest.approx(backlog)
    assert est.drain_seconds == pytest.approx((backlog + 36.0 * 3600) / (48.0 - 36.0))


def test_the_watchdog_sleeps_through_the_pause_with_the_same_results(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A 1 s max.poll.interval.ms: the watchdog would look once a second through the 48 h the
    group has no member. It sleeps until the group rejoins instead, and the run is the same:
    the backlog's batches (4 records of 2 s a partition) still get members kicked after it."""
    d = reference(consumers={"agent": {"max_poll_interval_ms": 1000}})
    sim, result = run(d, replay_scenario())
    sleeping = sim.layer(SlowBatches).kicks["agent"]
    monkeypatch.setattr(SlowBatchKicks, "sleep_while_gone", False)
    sim_awake, awake = run(d, replay_scenario())
    looking = sim_awake.layer(SlowBatches).kicks["agent"]
    assert sleeping.kicks == looking.kicks > 0
    assert result.model_dump() == awake.model_dump()
    assert looking.looks > 48 * 3600  # once a second while the group was away
    assert sleeping.looks < looking.looks - 48 * 3600


def test_members_kicked_at_one_look_rejoin_in_one_pass_with_the_same_results(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A 1 s max.poll.interval.ms and 16 instances: the backlog's slow batches get several
    members kicked at the same look. They rejoin in one assignor pass instead of one each, and
    the run is the same, rebalances and kicks included."""
    d = reference(consumers={"agent": {"max_poll_interval_ms": 1000, "instances": 16}})
    sim, result = run(d, replay_scenario())
    together = sim.layer(SlowBatches).kicks["agent"]
    monkeypatch.setattr(SlowBatchKicks, "batch", False)
    sim_one, one_by_one = run(d, replay_scenario())
    each = sim_one.layer(SlowBatches).kicks["agent"]
    assert result.model_dump() == one_by_one.model_dump()
    assert together.kicks == each.kicks == each.rejoins > 0
    assert result.metrics.rebalances >= 2 * together.kicks
    assert together.rejoins < each.rejoins / 4
