"""The budgets of one simulation, checked before any work: the server's pool and the CLI use them.

**Size.** A simulation's work is about its simulated events: the step events the scenario offers
the design (runs per second x duration x step events per run after the design's fan-out, or step
events per second x duration) plus the slow-batch watchdog's looks (each consumer group looks for
overdue batches every ``WATCHDOG_FRACTION`` of its ``max_poll_interval_ms``, so a group looks
``duration / (WATCHDOG_FRACTION x max_poll_interval_s)`` times). Measured on the course's
``replay`` scenario, a look costs 1-12 us, about what a step event costs, so both count against
the one budget ``SIM_MAX_STEP_EVENTS``. A simulation over it is refused up front
(:class:`SimulationRefused`, 422) naming the field that makes it big: a design field (a consumer
group's ``max_poll_interval_ms``, peer agents without ``max_subagents``) when the design makes
it big, the scenario's duration and rate otherwise.

**Wall time.** A simulation that outlasts ``SIM_TIMEOUT_SECONDS`` is stopped; the refusal names
the design decisions that can make a run slow (:func:`slow_causes`) where they can be known. The
server's pool kills its worker (app.simpool); the CLI runs in its own process and stops the run
with a timer (:func:`simulate_within`).
"""

from __future__ import annotations

import math
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from app.errors import BadInput, Unavailable
from simulator.design import ConsumerGroup, Design, OrchestrationPattern
from simulator.errors import FieldError
from simulator.fan_out import fan_out_per_run
from simulator.faults.rebalance import WATCHDOG_FRACTION
from simulator.result import SimulationResult
from simulator.scenario import Scenario, StepTime

DESIGN_FILE = "design"
"""The ``file`` of a FieldError about a design field (the design may come from a form, a file or
a request body)."""

MAIN_SHARE = 0.25
"""A part of the expected events is named as a cause when it is at least this share of them."""


class SimulationRefused(BadInput):
    """The simulation is too large for the budget, or too slow for a known reason of the design
    (422: ``fields`` names the design or scenario fields that make it so). Not an attempt: the
    learner is told what to change and nothing is recorded."""

    title = "Simulation refused"


def expected_step_events(design: Design, scenario: Scenario) -> float:
    """Step events ``scenario`` offers ``design`` over its whole duration (retries not counted).

    Runs mode: ``runs_per_second x duration_seconds x (model calls + tool calls + state writes)``
    per run after the design's orchestration (``simulator.fan_out.fan_out_per_run``); step events
    mode: ``step_events_per_second x duration_seconds``.
    """
    load = scenario.load
    if load.step_events_per_second is not None:
        return load.step_events_per_second * scenario.duration_seconds
    shape = fan_out_per_run(design, load)
    per_run = shape.model_calls + shape.tool_calls + shape.state_writes
    return (load.runs_per_second or 0.0) * scenario.duration_seconds * per_run


def groups(design: Design) -> dict[str, ConsumerGroup]:
    """The design's consumer groups by name (agent, tool, state)."""
    c = design.consumers
    return {"agent": c.agent, "tool": c.tool, "state": c.state}


def expected_watchdog_looks(design: Design, scenario: Scenario) -> dict[str, float]:
    """Looks of each consumer group's slow-batch watchdog over the scenario, by group name:
    ``duration_seconds / (WATCHDOG_FRACTION x max_poll_interval_ms / 1000)``; infinite for an
    interval so small that the period rounds to zero (5e-324 ms)."""
    looks = {}
    for name, group in groups(design).items():
        period_s = WATCHDOG_FRACTION * group.max_poll_interval_ms / 1000
        looks[name] = scenario.duration_seconds / period_s if period_s > 0 else math.inf
    return looks


def _step_time(scenario: Scenario, group: str) -> StepTime:
    times = scenario.load.step_time
    return {"agent": times.agent_step, "tool": times.tool_call, "state": times.state_write}[group]


def _poll_interval_cause(name: str, group: ConsumerGroup, looks: float) -> FieldError:
    interval = group.max_poll_interval_ms
    message = (
        f"{interval:,g} ms makes the {name} group's slow-batch watchdog look for overdue batches "
        f"every {interval * WATCHDOG_FRACTION:,g} ms: about {looks:,.0f} looks; raise it "
        "(Kafka's default is 300,000 ms)"
    )
    return FieldError(DESIGN_FILE, None, f"consumers.{name}.max_poll_interval_ms", message)


def size_causes(design: Design, scenario: Scenario) -> list[FieldError]:
    """The fields that make the expected events large: each part worth at least MAIN_SHARE of
    them, the design's own fields first."""
    steps = expected_step_events(design, scenario)
    looks = expected_watchdog_looks(design, scenario)
    total = steps + sum(looks.values())
    causes = [
        _poll_interval_cause(name, groups(design)[name], count)
        for name, count in looks.items()
        if count >= MAIN_SHARE * total
    ]
    if steps >= MAIN_SHARE * total:
        orch = design.orchestration
        runs_mode = scenario.load.step_events_per_second is None
        if (
            runs_mode
            and orch.pattern is OrchestrationPattern.peer_agents
            and orch.max_subagents is None
        ):
            m = scenario.load.fan_out.uncapped_peer_multiplier
            message = (
                f"peer agents without a cap make x{m:g} the planned step events per run; set a cap"
            )
            causes.append(FieldError(DESIGN_FILE, None, "orchestration.max_subagents", message))
        rate = "load.runs_per_second" if runs_mode else "load.step_events_per_second"
        message = f"about {steps:,.0f} step events; shorten the duration or lower the rate"
        where = f"scenario {scenario.name}"
        causes.append(FieldError(where, None, "duration_seconds", message))
        causes.append(FieldError(where, None, rate, message))
    return causes


def check_size(design: Design, scenario: Scenario, max_step_events: int) -> None:
    """Raise SimulationRefused, naming the fields that make it big (:func:`size_causes`), when the
    scenario is expected to take ``design`` through more than ``max_step_events`` simulated
    events (step events plus watchdog looks)."""
    steps = expected_step_events(design, scenario)
    total = steps + sum(expected_watchdog_looks(design, scenario).values())
    if total <= max_step_events:
        return
    causes = size_causes(design, scenario)
    named = "; ".join(f"{c.field}: {c.message}" for c in causes)
    raise SimulationRefused(
        f"Scenario {scenario.name!r} is too large to simulate with this design: about "
        f"{total:,.0f} simulated events, more than the {max_step_events:,} one simulation may "
        f"take. {named}.",
        causes,
    )


REBALANCE_WORK_LIMIT = 1_000_000
"""Members x partitions of a consumer group from which its rebalances, not its step events, can
make a run slow: each one reassigns up to every partition among every member (measured: the
reference's 8 x 96 rebalances in microseconds; 1,024 instances x 4,096 partitions in a replay whose
batches wait on the model provider ran over two minutes, rebalancing again and again)."""


def slow_causes(design: Design, scenario: Scenario) -> list[FieldError]:
    """Design decisions known to make a simulation slow: a consumer group whose
    ``max_poll_interval_ms`` is shorter than its mean step time (almost every batch outlasts it,
    so its member is kicked and the group rebalances again and again), or whose instances x
    partitions reach :data:`REBALANCE_WORK_LIMIT` (each rebalance then costs that much work)."""
    causes = []
    partitions = design.event_log.partitions
    for name, group in groups(design).items():
        if group.instances * partitions >= REBALANCE_WORK_LIMIT:
            message = (
                f"{group.instances:,} instances share {partitions:,} partitions: every rebalance "
                f"reassigns up to {partitions:,} partitions among {group.instances:,} members, and "
                "a run whose batches outlast max.poll.interval.ms (here, waiting on a backlog) "
                "rebalances again and again; fewer, larger instances"
            )
            causes.append(FieldError(DESIGN_FILE, None, f"consumers.{name}.instances", message))
        step_ms = _step_time(scenario, name).mean_seconds * 1000
        if group.max_poll_interval_ms < step_ms:
            message = (
                f"{group.max_poll_interval_ms:,g} ms is shorter than one {name} step "
                f"({step_ms:,g} ms on average), so almost every batch outlasts it: its member is "
                "kicked and the group rebalances again and again; raise it"
            )
            causes.append(
                FieldError(DESIGN_FILE, None, f"consumers.{name}.max_poll_interval_ms", message)
            )
    return causes


def bounds_error(exc: ValueError, scenario: Scenario) -> BadInput:
    """The simulator's own ValueError for its bounds, as bad input about the scenario."""
    return BadInput(
        f"Scenario {scenario.name!r} cannot be simulated: {exc}",
        [FieldError(f"scenario {scenario.name}", None, "", str(exc))],
    )


class WallTimeExceeded(Exception):
    """Raised inside a simulation by :func:`wall_time_limit`'s timer."""


@contextmanager
def wall_time_limit(seconds: float) -> Iterator[None]:
    """Raise WallTimeExceeded in the block once it has run ``seconds`` of wall time (a real-time
    interval timer, SIGALRM). Only the main thread receives signals: elsewhere, and on a
    platform without ``setitimer``, the block runs unbounded."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(
        signal, "setitimer"
    ):
        yield
        return

    def expired(_signum: int, _frame: object) -> None:
        raise WallTimeExceeded()

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def simulate_within(
    design: Design,
    scenario: Scenario,
    seed: int,
    *,
    max_step_events: int,
    timeout_seconds: float,
    timeout_flag: str = "--timeout-seconds",
    scenario_is_input: bool = False,
) -> SimulationResult:
    """``simulator.simulate`` in this process within the server's budgets (for the CLI): the size
    checked up front (:func:`check_size`), the wall time bounded by :func:`wall_time_limit`.

    Raises SimulationRefused (too large; over ``timeout_seconds`` because of design fields that
    make it slow, which it names), app.errors.Unavailable (over ``timeout_seconds`` with nothing
    in the design to blame: the machine, or ``timeout_flag`` too tight; SimulationRefused naming
    the scenario's duration instead when ``scenario_is_input``, a scenario file of the user's own)
    and BadInput for the simulator's own bounds.
    """
    from simulator import simulate

    check_size(design, scenario, max_step_events)
    try:
        with wall_time_limit(timeout_seconds):
            return simulate(design, scenario, seed)
    except ValueError as exc:
        raise bounds_error(exc, scenario) from exc
    except WallTimeExceeded as exc:
        causes = slow_causes(design, scenario)
        if not causes and scenario_is_input:
            causes = [
                FieldError(
                    f"scenario {scenario.name}",
                    None,
                    "duration_seconds",
                    f"{scenario.duration_seconds:,g} s simulated did not finish in "
                    f"{timeout_seconds:g} s; shorten it, or allow more time with {timeout_flag}",
                )
            ]
        if not causes:
            # Nothing in the design makes this run slow: the machine was busy or the limit is
            # too tight for it. Not the design's fault, so not bad input (Unavailable, exit 3).
            raise Unavailable(
                f"Scenario {scenario.name!r} did not finish in the {timeout_seconds:g} s of wall "
                f"time one simulation may use, so it was stopped. Nothing in the design makes "
                f"it slow ({scenario.duration_seconds:,g} s simulated): the machine may be busy. "
                f"Run it again, or allow more time with {timeout_flag}.",
                retry_after_seconds=math.ceil(timeout_seconds),
            ) from exc
        named = "; ".join(f"{c.field}: {c.message}" for c in causes)
        raise SimulationRefused(
            f"Scenario {scenario.name!r} took longer than the {timeout_seconds:g} s one "
            f"simulation may use, so it was stopped: {named}.",
            causes,
        ) from exc
