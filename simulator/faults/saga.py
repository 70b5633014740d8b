"""``saga_failure``: sagas over side-effecting tool calls fail, compensate, or go to a person.

**Sagas in the workload**: each run carries ``sagas_per_run`` sagas (a fractional mean is kept
exactly over the runs), each made of ``steps`` consecutive tool calls of the run, its first ones.
Forward step ``k`` succeeds independently with ``step_success``; the first failure, at step ``k``,
leaves ``k - 1`` completed steps to compensate (Garcia-Molina and Salem, "Sagas", 1987).

**Compensation, as the design decides** (``tools.saga``):

- disabled, or ``compensation_order: none``: nothing is undone;
- ``reverse``: compensations run ``C(k-1) .. C1``; ``forward``: ``C1 .. C(k-1)``, so each one after
  the first undoes a step whose prerequisite was already released (a refund to a released hold):
  counted in ``compensations_misapplied``;
- each compensation is tried up to ``max_compensation_attempts`` times, an attempt succeeding with
  ``compensation_success``. A failed attempt is a timeout whose effect still landed with
  ``applied_on_failure``; without ``compensation_idempotency_key`` the retry applies it again
  (``compensations_repeated``), with its own key the receiver recognises the retry;
- when every attempt of a compensation fails the saga stops compensating; with
  ``escalate_to_human_queue`` it goes to the human queue (``sagas_to_human_queue``), otherwise it is
  left half undone (``sagas_left_undone``);
- the saga's irreversible step (a delivery) is its last with ``irreversible_steps_last``, else its
  first, and then a failure after it leaves it undone (``sagas_left_undone``);
- a share ``approval_never_share`` of the sagas waits for an approval that never comes: held for
  ever (``sagas_held_forever``) unless ``approval_deadline_hours`` expires them.

**Forward retries**: each completed forward step's call timed out after its effect landed with
``forward_timeout_share`` (a binomial draw per saga, after the outcomes above), and the tool worker
retried it (``tool_retries_after_effect``). The retry repeats the effect (counted in
``duplicate_effects``) unless the call carries the event's idempotency key
(``tools.side_effect_idempotency_key`` with keys from the event id): the receiver recognises it.

**In the simulation**: outcomes are drawn for every saga of the window with the run's seed
(:func:`draw_sagas`, vectorised), every compensation attempt is a tool call whose time (the mean
tool-call time) is added to the tool event of the failing step, and the counts include the sagas
whose deciding tool event (the failing step, or the last step when it completes) was processed in
the window. A forward retry is a tool call too, its time added the same way.
``saga_compensations`` counts compensations started.
"""

from __future__ import annotations

import math
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import simpy

from simulator.design import CompensationOrder, SagaSection
from simulator.engine.eventlog import position_in_run as index_in_run
from simulator.engine.hooks import FaultLayer, amend
from simulator.faults.checkpoint import position_in_run
from simulator.result import SimulationResult
from simulator.scenario import SagaFailure

if TYPE_CHECKING:
    from simulator.engine.run import Simulation
    from simulator.scenario import Fault


@dataclass(frozen=True)
class SagaDraws:
    """Outcomes of ``n`` sagas, arrays of shape ``(n,)``.

    ``failed_at``: 0-based index of the first failed step, -1 when the saga completed;
    ``compensations``: compensations started; ``attempts``: compensation attempts (retries
    included); ``stuck``: a compensation failed every attempt; ``to_human_queue``: stuck and
    escalated; ``left_undone``: failed after a step and nothing (more) undoes it (no
    compensation, stuck without escalation, or an irreversible step placed before the step that
    failed); ``duplicates``: effects applied twice by unkeyed retries; ``misapplied``:
    compensations run out of order; ``held_forever``: waiting for an approval that never comes,
    with no deadline to expire it.
    """

    failed_at: np.ndarray
    compensations: np.ndarray
    attempts: np.ndarray
    stuck: np.ndarray
    to_human_queue: np.ndarray
    left_undone: np.ndarray
    duplicates: np.ndarray
    misapplied: np.ndarray
    held_forever: np.ndarray

    @property
    def sagas(self) -> int:
        """Number of sagas."""
        return int(self.failed_at.size)


def draw_sagas(
    n: int,
    steps: int,
    step_success: float,
    rng: np.random.Generator,
    saga: SagaSection,
    *,
    compensation_success: float = 1.0,
    applied_on_failure: float = 0.0,
    approval_never: float = 0.0,
    impossible: float = 0.0,
) -> SagaDraws:
    """Draw the outcomes of ``n`` sagas of ``steps`` steps under the design's ``saga`` section.

    Rules in the module docstring. Step ``k`` of a saga is one uniform draw ``< step_success``;
    a compensation's attempts are ``min(G, N)`` with ``G`` geometric(``compensation_success``) and
    ``N = max_compensation_attempts``, failing every attempt when ``G > N``. The saga's one
    irreversible step (a delivery nothing can take back) is its last with
    ``irreversible_steps_last``, else its first, and then a failure after it leaves it undone. A
    share ``approval_never`` of the sagas waits for a human approval that never comes: held for
    ever unless ``approval_deadline_hours`` expires it; a share ``impossible`` of compensations
    fails every attempt. Raises ``ValueError`` for ``n < 0``,
    ``steps < 1`` or a probability outside [0, 1].
    """
    for name, value in (
        ("step_success", step_success),
        ("compensation_success", compensation_success),
        ("applied_on_failure", applied_on_failure),
        ("approval_never", approval_never),
        ("impossible", impossible),
    ):
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"{name} must lie in [0, 1], got {value}")
    if n < 0 or steps < 1:
        raise ValueError(f"need n >= 0 and steps >= 1, got n={n}, steps={steps}")
    ok = rng.random((n, steps)) < step_success
    failed = ~ok.all(axis=1)
    failed_at = np.where(failed, np.argmin(ok, axis=1), -1).astype(np.int64)
    done = np.where(failed, failed_at, 0)
    zeros = np.zeros(n, dtype=np.int64)
    waiting = rng.random(n) < approval_never if approval_never > 0 else zeros.astype(bool)
    held = np.asarray(waiting & (saga.approval_deadline_hours is None), dtype=bool)
    irreversible_undone = (failed_at > 0) & (not saga.irreversible_steps_last)
    if not saga.enabled or saga.compensation_order == CompensationOrder.none or steps < 2:
        nothing = zeros.astype(bool)
        return SagaDraws(
            failed_at, zeros, zeros, nothing, nothing, failed_at > 0, zeros, zeros, held
        )
    limit = saga.max_compensation_attempts
    width = steps - 1
    if compensation_success >= 1.0:
        geometric = np.ones((n, width), dtype=np.int64)
    elif compensation_success <= 0.0:
        geometric = np.full((n, width), limit + 1, dtype=np.int64)
    else:
        geometric = rng.geometric(compensation_success, size=(n, width))
    if impossible > 0.0:
        # A compensation the receiver can never accept (the hold was already captured).
        geometric = np.where(rng.random((n, width)) < impossible, limit + 1, geometric)
    column = np.arange(width)[None, :]
    needed = column < done[:, None]
    gave_up = needed & (geometric > limit)
    # Compensations run in order until one fails every attempt; the columns are execution order.
    first_stuck = np.where(gave_up.any(axis=1), np.argmax(gave_up, axis=1), width)
    started = needed & (column <= first_stuck[:, None])
    attempts_each = np.where(started, np.minimum(geometric, limit), 0)
    attempts = attempts_each.sum(axis=1)
    compensations = started.sum(axis=1)
    stuck = np.asarray(gave_up.any(axis=1), dtype=bool)
    to_human = np.asarray(stuck & saga.escalate_to_human_queue, dtype=bool)
    retries = np.where(started, attempts_each - 1, 0).sum(axis=1)
    if saga.compensation_idempotency_key or applied_on_failure == 0.0:
        duplicates = zeros
    else:
        duplicates = rng.binomial(retries, applied_on_failure)
    if saga.compensation_order == CompensationOrder.forward:
        misapplied = np.maximum(compensations - 1, 0)
    else:
        misapplied = zeros
    return SagaDraws(
        failed_at,
        compensations.astype(np.int64),
        attempts.astype(np.int64),
        stuck,
        to_human,
        np.asarray((stuck & ~to_human) | irreversible_undone, dtype=bool),
        np.asarray(duplicates, dtype=np.int64),
        misapplied.astype(np.int64),
        held,
    )


@dataclass
class SagaState:
    """Sagas of one simulation: which tool event decides each, and the draws."""

    decisive_rows: np.ndarray
    draws: SagaDraws
    forward_retries: np.ndarray
    """Per saga, shape ``(n,)``: forward calls retried after a timeout whose effect landed."""
    keyed: bool
    """The retries carry the event's idempotency key (the receiver recognises them)."""
    counted: dict[str, int] = field(default_factory=dict)


class Sagas(FaultLayer):
    """``saga_failure`` faults (see the module docstring): ``state``, the sagas of the window
    (None before the fault starts). Contributes ``saga_compensations``,
    ``sagas_to_human_queue``, to ``duplicate_effects``, and a note."""

    kinds = ("saga_failure",)

    def __init__(self) -> None:
        self.state: SagaState | None = None

    def start(self, sim: Simulation, fault: Fault) -> Generator[simpy.Event, Any, None]:
        """SimPy process of a ``saga_failure``: draws every saga of the window at time 0."""
        assert isinstance(fault, SagaFailure)
        group = sim.groups["tool"]
        topic = sim.topics["tool"]
        graph = sim.graph
        if graph is not None:
            # Causal runs: the tool events of the run graph, in event order (their ids stand for
            # the rows; a run's tool events in id order are in its order).
            ids_of_row = np.nonzero(graph.kind == 1)[0]
            runs = graph.run[ids_of_row]
            index = index_in_run(runs)
            tool_steps = graph.step_s[ids_of_row]
        else:
            index, _ = position_in_run(topic)
            runs = topic.run
            tool_steps = topic.step_s
        n_runs = int(runs.max()) + 1 if runs.size else 0
        edges = np.floor(np.arange(n_runs + 1, dtype=np.float64) * fault.sagas_per_run + 1e-9)
        per_run = np.diff(edges).astype(np.int64)
        steps = fault.steps
        in_saga = index < per_run[runs] * steps if runs.size else np.zeros(0, dtype=bool)
        rows = np.nonzero(in_saga)[0]
        saga_of_row = runs[rows] * 1_000_003 + index[rows] // steps
        step_of_row = index[rows] % steps
        ids, inverse = np.unique(saga_of_row, return_inverse=True)
        inverse = inverse.ravel()
        complete = np.bincount(inverse, minlength=ids.size) == steps
        rng = np.random.Generator(np.random.PCG64(group.rng.getrandbits(64)))
        draws = draw_sagas(
            int(ids.size),
            steps,
            fault.step_success,
            rng,
            sim.design.tools.saga,
            compensation_success=fault.compensation_success,
            applied_on_failure=fault.applied_on_failure,
            approval_never=fault.approval_never_share,
            impossible=fault.compensation_impossible_share,
        )
        completed = np.where(draws.failed_at >= 0, draws.failed_at, steps)
        if fault.forward_timeout_share > 0.0:
            retries = rng.binomial(completed, fault.forward_timeout_share).astype(np.int64)
        else:
            retries = np.zeros(ids.size, dtype=np.int64)
        decide_step = np.where(draws.failed_at >= 0, draws.failed_at, steps - 1)
        decisive = np.full(ids.size, -1, dtype=np.int64)
        match = step_of_row == decide_step[inverse]
        decisive[inverse[match]] = rows[match]
        decisive[~complete] = -1  # sagas cut by the window's edges are not counted
        mean_tool_s = float(tool_steps.mean()) if tool_steps.size else 0.0
        calls = draws.attempts + retries
        work = np.nonzero((calls > 0) & (decisive >= 0))[0]
        for s in work.tolist():
            row = int(decisive[s])
            extra = float(calls[s]) * mean_tool_s
            if graph is not None and sim.world is not None:
                sim.world.ev_step[int(ids_of_row[row])] += extra
                continue
            p = int(np.searchsorted(topic.start, row, side="right") - 1)
            group.parts[p].step[row - int(topic.start[p])] += extra
        if graph is not None:
            decisive = np.where(decisive >= 0, ids_of_row[np.maximum(decisive, 0)], -1)
        self.state = SagaState(decisive, draws, retries, group.tool_keyed)
        return
        yield  # a process that acts at time 0 only

    def finish(self, sim: Simulation) -> None:
        """Count the sagas decided in the window (:func:`count`)."""
        if self.state is not None:
            count(sim, self.state)

    def contribute(self, sim: Simulation, result: SimulationResult) -> SimulationResult:
        """The compensations, the sagas sent to the human queue, left undone or held for ever,
        the compensations repeated or run out of order, the forward retries (and the effects
        they repeated, added to ``duplicate_effects``), and a note."""
        if self.state is None or not self.state.counted:
            return result
        counted = self.state.counted
        return amend(
            result,
            [sagas_note(counted)],
            saga_compensations=counted["saga_compensations"],
            sagas_to_human_queue=counted["sagas_to_human_queue"],
            sagas_left_undone=counted["left_half_undone"],
            sagas_held_forever=counted["held_forever"],
            compensations_repeated=counted["compensations_repeated"],
            compensations_misapplied=counted["compensations_misapplied"],
            tool_retries_after_effect=counted["tool_retries_after_effect"],
            duplicate_effects=result.metrics.duplicate_effects + counted["forward_repeated"],
        )


def count(sim: Simulation, state: SagaState) -> dict[str, int]:
    """After the run: saga figures over the sagas whose deciding tool event was processed."""
    _, finishes = sim.first_times("tool")
    event = sim.topics["tool"].event
    if event is not None and sim.graph is not None:
        # Causal runs: the decisive rows are event ids; look their finishes up by id.
        by_id = np.full(sim.graph.events, np.nan)
        by_id[event] = finishes
        finishes = by_id
    rows = state.decisive_rows
    seen = np.zeros(rows.size, dtype=bool)
    valid = rows >= 0
    seen[valid] = np.isfinite(finishes[rows[valid]])
    d = state.draws
    state.counted = {
        "sagas": int(seen.sum()),
        "failed": int(np.count_nonzero(seen & (d.failed_at >= 0))),
        "saga_compensations": int(d.compensations[seen].sum()),
        "sagas_to_human_queue": int(np.count_nonzero(seen & d.to_human_queue)),
        "left_half_undone": int(np.count_nonzero(seen & d.left_undone)),
        "compensations_repeated": int(d.duplicates[seen].sum()),
        "compensations_misapplied": int(d.misapplied[seen].sum()),
        "held_forever": int(np.count_nonzero(seen & d.held_forever)),
        "compensation_attempts": int(d.attempts[seen].sum()),
        "tool_retries_after_effect": int(state.forward_retries[seen].sum()),
    }
    state.counted["forward_repeated"] = (
        0 if state.keyed else state.counted["tool_retries_after_effect"]
    )
    return state.counted


def sagas_note(counted: dict[str, int]) -> str:
    """One sentence on the window's sagas."""
    n = counted["sagas"]
    rate = counted["failed"] / n if n else math.nan
    return (
        f"sagas: {n} decided, {counted['failed']} failed ({rate:.2%}), "
        f"{counted['saga_compensations']} compensations, {counted['sagas_to_human_queue']} to the "
        f"human queue, {counted['left_half_undone']} left half undone"
    )

