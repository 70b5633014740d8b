"""The fault layers' plug-in interface (simulator.engine.hooks) and the assembly that uses it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from simulator.engine.hooks import FaultLayer, GroupHooks, Layers, amend
from simulator.faults import LAYERS, layers_for
from simulator.faults.checkpoint import CheckpointRework, CheckpointWrites
from simulator.faults.crash import WorkerCrashes
from simulator.faults.poison import PoisonEvents
from simulator.faults.provider_outage import ModelRouting
from simulator.faults.rebalance import SlowBatches
from simulator.faults.transient import TransientRetries
from simulator.files import load_design, load_scenario
from simulator.result import Metrics, SimulationResult, Timeseries
from simulator.scenario import Scenario

STEPS = Path(__file__).resolve().parents[2] / "steps"


def a_result() -> SimulationResult:
    empty = Timeseries(
        interval_seconds=1.0,
        t_s=[],
        lag_total=[],
        lag_worst_partition=[],
        arrivals_eps=[],
        throughput_eps=[],
        in_flight=[],
        errors=[],
    )
    return SimulationResult(
        simulator_version="x",
        scenario="t",
        seed=1,
        duration_seconds=60.0,
        metrics=Metrics(
            arrivals=10,
            processed=8,
            throughput_eps=0.1,
            capacity_eps=1.0,
            utilisation=0.1,
            lag_total_max=0,
            backlog_peak=0,
            drain_seconds=None,
            latency_p50_s=1.0,
            latency_p95_s=1.0,
            latency_p99_s=1.0,
            lost=2,
        ),
        timeseries=empty,
        notes=["first"],
    )


def test_amend_sets_named_metrics_and_appends_notes() -> None:
    result = a_result()
    amended = amend(result, ["second"], lost=5, fallback_calls=3)
    assert (amended.metrics.lost, amended.metrics.fallback_calls) == (5, 3)
    assert amended.notes == ["first", "second"]
    assert result.metrics.lost == 2  # the original is not changed


def test_amend_with_nothing_returns_the_result_itself() -> None:
    result = a_result()
    assert amend(result) is result


def test_amend_refuses_a_name_that_is_not_a_metric() -> None:
    with pytest.raises(ValueError, match="not metrics of a result: lots"):
        amend(a_result(), lots=1)


class _Claims(FaultLayer):
    kinds = ("poison",)


def test_two_layers_claiming_one_fault_kind_are_refused() -> None:
    with pytest.raises(ValueError, match="fault kind poison claimed by PoisonEvents and _Claims"):
        Layers([PoisonEvents(), _Claims()])


def test_a_layer_is_found_by_its_class_and_a_missing_one_raises() -> None:
    layers = Layers([TransientRetries(), PoisonEvents()])
    assert isinstance(layers.get(PoisonEvents), PoisonEvents)
    assert layers.find(SlowBatches) is None
    with pytest.raises(LookupError, match="no SlowBatches layer"):
        layers.get(SlowBatches)


class _Answers(FaultLayer):
    """Answers every hook with fixed values and records the calls it gets."""

    def __init__(self, wait: float, how: int, kick: bool) -> None:
        self.wait, self.how, self.kick = wait, how, kick
        self.calls: list[tuple[str, Any]] = []

    def retry_wait(self, group: Any, part: Any, t: float, code: float) -> float:
        self.calls.append(("retry_wait", group))
        return self.wait

    def on_repeat(self, group: Any, part: Any, pos: int, t: float, completed: bool) -> int:
        self.calls.append(("on_repeat", group))
        return self.how

    def on_slow_batch(self, group: Any, part: Any, t: float) -> bool:
        self.calls.append(("on_slow_batch", group))
        return self.kick

    def on_give_up(self, group: Any, part: Any, pos: int, t: float, dead_lettered: bool) -> None:
        self.calls.append(("on_give_up", group))


def test_group_hooks_take_the_first_answer_and_tell_every_layer_of_a_give_up() -> None:
    silent = _Answers(-1.0, -1, False)
    first = _Answers(2.5, 0, True)
    second = _Answers(9.0, 2, True)
    hooks = GroupHooks("the group", Layers([silent, first, second]))  # type: ignore[arg-type]
    part: Any = object()
    assert hooks.retry_wait(part, 1.0, -2.0) == 2.5
    assert hooks.on_repeat(part, 0, 1.0, True) == 0
    assert hooks.on_slow_batch(part, 1.0) is True
    hooks.on_give_up(part, 0, 1.0, True)
    assert [name for name, _ in second.calls] == ["on_give_up"]
    assert [name for name, _ in silent.calls] == [
        "retry_wait",
        "on_repeat",
        "on_slow_batch",
        "on_give_up",
    ]
    assert {group for _, group in first.calls} == {"the group"}


def test_group_hooks_without_an_answer_leave_the_engines_rule() -> None:
    hooks = GroupHooks("g", Layers([TransientRetries()]))  # type: ignore[arg-type]
    part: Any = object()
    assert hooks.on_repeat(part, 0, 1.0, True) == -1
    assert hooks.on_slow_batch(part, 1.0) is False


def test_every_simulation_has_the_design_wide_layers_and_the_named_faults_only() -> None:
    design = load_design(STEPS / "designs" / "reference.yaml")
    quiet = layers_for(design, Scenario.model_validate({"name": "t"}))
    # A scenario that drives runs has their checkpoint writes too.
    assert [type(x) for x in quiet] == [
        TransientRetries,
        ModelRouting,
        CheckpointWrites,
        SlowBatches,
    ]
    single = Scenario.model_validate(
        {"name": "t", "load": {"runs_per_second": None, "step_events_per_second": 10}}
    )
    assert CheckpointWrites not in [type(x) for x in layers_for(design, single)]
    crash = load_scenario(STEPS / "scenarios" / "worker-crash.yaml")
    kinds = {f.kind for f in crash.faults}
    assert "worker_crash" in kinds
    types = [type(x) for x in layers_for(design, crash)]
    assert {WorkerCrashes, CheckpointRework} <= set(types)
    assert types == [cls for cls in LAYERS if cls in types]  # in LAYERS order
