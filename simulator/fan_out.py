"""The workload a design and a scenario produce: step events per run, and per consumer group.

The scenario plans a run's fan-out (model calls, tool calls, state writes); the design's
orchestration shapes it (:func:`fan_out_per_run`). The estimate turns it into mean arrivals per
group (:func:`mean_arrivals_eps`); the simulation draws its runs from the same figures.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field

from simulator.design import Design, OrchestrationPattern
from simulator.groups import GroupName
from simulator.scenario import Load

SINGLE_AGENT_CALL_FACTOR = 4 / 15
"""Model calls of a single agent relative to a multi-agent run: about 4x a chat's tokens against
about 15x for a multi-agent system (Anthropic, "How we built our multi-agent research system",
2025; worked-numbers item 11)."""


class RunFanOut(BaseModel):
    """Step events one run produces after the design's orchestration rules (expected values)."""

    model_config = ConfigDict(extra="forbid", ser_json_inf_nan="null")

    model_calls: float
    tool_calls: float
    state_writes: float
    factor: float = Field(description="Multiplier on the scenario's planned model calls.")
    tokens_per_run: float
    note: str

    @property
    def step_events(self) -> float:
        """Model calls + tool calls + state writes."""
        return self.model_calls + self.tool_calls + self.state_writes


PLANNED_RESEARCHERS = 5
"""Researcher tasks the orchestrator plans per run (the scenario's fan-out is their work plus the
planner's, the writer's and the reviewer's)."""
FIXED_ROLE_SHARE = 0.25
"""Share of a run's planned model calls and state writes done by the planner, writer and reviewer
(2 : 2 : 1 between them); the researchers do the rest and every tool call."""


class RunTasks(BaseModel):
    """The tasks of one run after the design's orchestration (expected counts per task).

    ``fixed``: the planner's, writer's and reviewer's model calls and state writes, each
    ``(model, tool, state)``; ``researchers``: researcher tasks per run; ``per_researcher``: the
    work of one researcher ``(model, tool, state)``; ``sequential``: one agent does everything in
    order; ``tokens_per_call``: input + output tokens of one model call.
    """

    model_config = ConfigDict(extra="forbid")

    fixed: list[tuple[float, float, float]]
    researchers: float
    per_researcher: tuple[float, float, float]
    sequential: bool
    tokens_per_call: float
    note: str

    @property
    def totals(self) -> tuple[float, float, float]:
        """Model calls, tool calls and state writes of one run."""
        m = sum(f[0] for f in self.fixed) + self.researchers * self.per_researcher[0]
        t = sum(f[1] for f in self.fixed) + self.researchers * self.per_researcher[1]
        s = sum(f[2] for f in self.fixed) + self.researchers * self.per_researcher[2]
        return m, t, s


def run_tasks(design: Design, load: Load) -> RunTasks:
    """The run's tasks under the design's orchestration (the rule of :func:`fan_out_per_run`).

    The planned fan-out (20 model calls, 12 tool calls, 40 state writes) is a planner (2 calls,
    4 writes), :data:`PLANNED_RESEARCHERS` researchers sharing 15 calls, 12 tool calls and 30
    writes, a writer (2 calls, 4 writes) and a reviewer (1 call, 2 writes).

    - ``orchestrator_worker``: the orchestrator plans the researchers; ``max_subagents`` below
      the plan splits the same research over fewer tasks (each longer).
    - ``peer_agents``: peers spawn researchers, each a planned researcher's share, until the run
      makes ``uncapped_peer_multiplier`` x the planned model calls; ``max_subagents`` caps the
      researchers (a cap above what peers spawn changes nothing).
    - ``single_agent``: one task does every step in order (its research runs in sequence); its
      calls carry 4/15 of a multi-agent run's tokens (about 4x a chat's tokens against about 15x
      for a multi-agent system: Anthropic, "How we built our multi-agent research system", 2025).
    - ``token_budget_per_run``: a run stops its research when its tokens would run out: fewer
      researchers (at least one), or, for a single agent, fewer calls.
    """
    fan = load.fan_out
    orch = design.orchestration
    tokens = float(load.tokens.input_per_call + load.tokens.output_per_call)
    fm = fan.model_calls * FIXED_ROLE_SHARE
    fs = fan.state_writes * FIXED_ROLE_SHARE
    fixed = [(fm * 0.4, 0.0, fs * 0.4), (fm * 0.4, 0.0, fs * 0.4), (fm * 0.2, 0.0, fs * 0.2)]
    research = (fan.model_calls - fm, float(fan.tool_calls), fan.state_writes - fs)
    share = tuple(x / PLANNED_RESEARCHERS for x in research)
    notes = []
    if orch.pattern is OrchestrationPattern.single_agent:
        calls = float(fan.model_calls)
        per_call = tokens * SINGLE_AGENT_CALL_FACTOR
        notes.append("single agent: every step in one task, 4/15 of the tokens")
        budget = orch.token_budget_per_run
        if budget is not None and per_call > 0 and calls * per_call > budget:
            calls = budget / per_call
            notes.append(f"token budget {budget:,} stops a run after {calls:.1f} calls")
        return RunTasks(
            fixed=[(calls, float(fan.tool_calls), float(fan.state_writes))],
            researchers=0.0,
            per_researcher=(0.0, 0.0, 0.0),
            sequential=True,
            tokens_per_call=per_call,
            note="; ".join(notes),
        )
    if orch.pattern is OrchestrationPattern.peer_agents:
        spawned = PLANNED_RESEARCHERS
        if share[0] > 0:
            spawned = round((fan.model_calls * fan.uncapped_peer_multiplier - fm) / share[0])
        researchers = float(
            spawned if orch.max_subagents is None else min(orch.max_subagents, spawned)
        )
        per = share
        if orch.max_subagents is None:
            notes.append(f"peer agents without a cap: {researchers:g} researchers")
        else:
            notes.append(f"peer agents capped at {orch.max_subagents}: {researchers:g} researchers")
    else:
        researchers = float(min(orch.max_subagents or PLANNED_RESEARCHERS, PLANNED_RESEARCHERS))
        per = tuple(x / researchers for x in research)
        notes.append(f"orchestrator and {researchers:g} researchers")
    budget = orch.token_budget_per_run
    if budget is not None and tokens > 0 and per[0] > 0:
        most_calls = budget / tokens
        fixed_calls = sum(f[0] for f in fixed)
        if fixed_calls + researchers * per[0] > most_calls:
            researchers = float(max(1, math.floor((most_calls - fixed_calls) / per[0])))
            notes.append(f"token budget {budget:,} stops research at {researchers:g} researchers")
    return RunTasks(
        fixed=fixed,
        researchers=researchers,
        per_researcher=(per[0], per[1], per[2]),
        sequential=False,
        tokens_per_call=tokens,
        note="; ".join(notes),
    )


def fan_out_per_run(design: Design, load: Load) -> RunFanOut:
    """Apply the design's orchestration to the scenario's planned fan-out (20 / 12 / 40).

    The rule, kept simple and shared by the estimate, the simulator and the bill:

    - ``orchestrator_worker``: the orchestrator plans the fan-out, so a run makes the planned calls.
    - ``peer_agents`` without ``max_subagents``: peers spawn peers; a run makes
      ``uncapped_peer_multiplier`` times the planned model calls, tool calls and state writes.
      With a cap, the planned figures hold.
    - ``single_agent``: one agent does the work in one context: model calls x 4/15 (about 4x a
      chat's tokens against 15x for multi-agent runs); tool calls and state writes as planned.
    - ``token_budget_per_run``: a run stops when its tokens run out, so model calls per run are at
      most budget / (input + output tokens per call).

    A causal run model (``load.run_model``) takes its counts from :func:`run_tasks` instead.
    """
    fan = load.fan_out
    if load.run_model == "causal":
        tasks = run_tasks(design, load)
        calls, tools, writes = tasks.totals
        return RunFanOut(
            model_calls=calls,
            tool_calls=tools,
            state_writes=writes,
            factor=calls / fan.model_calls if fan.model_calls else 1.0,
            tokens_per_run=calls * tasks.tokens_per_call,
            note=tasks.note,
        )
    tokens_per_call = load.tokens.input_per_call + load.tokens.output_per_call
    model_calls, tool_calls, state_writes, note = _orchestrated(design, load)
    notes = [note]
    most = _calls_within_token_budget(design, load)
    if most is not None and model_calls > most:
        notes.append(
            f"token budget {design.orchestration.token_budget_per_run:,} stops a run after "
            f"{most:.1f} calls"
        )
        model_calls = most
    return RunFanOut(
        model_calls=model_calls,
        tool_calls=tool_calls,
        state_writes=state_writes,
        factor=model_calls / fan.model_calls if fan.model_calls else 1.0,
        tokens_per_run=model_calls * tokens_per_call,
        note="; ".join(notes),
    )


def stopped_by_token_budget(design: Design, load: Load) -> bool:
    """True when the design's ``token_budget_per_run`` ends a run before its model calls are
    done (:func:`fan_out_per_run` then gives budget / tokens per call)."""
    if load.run_model == "causal":
        return "token budget" in run_tasks(design, load).note
    most = _calls_within_token_budget(design, load)
    return most is not None and _orchestrated(design, load)[0] > most


def _orchestrated(design: Design, load: Load) -> tuple[float, float, float, str]:
    """Model calls, tool calls and state writes of a run after the orchestration pattern, before
    any token budget, and the note naming the rule applied."""
    fan = load.fan_out
    orch = design.orchestration
    model_calls = float(fan.model_calls)
    tool_calls = float(fan.tool_calls)
    state_writes = float(fan.state_writes)
    if orch.pattern is OrchestrationPattern.peer_agents and orch.max_subagents is None:
        m = fan.uncapped_peer_multiplier
        model_calls *= m
        tool_calls *= m
        state_writes *= m
        note = f"peer agents without a cap: x{m:g} the planned step events"
        return model_calls, tool_calls, state_writes, note
    if orch.pattern is OrchestrationPattern.single_agent:
        model_calls *= SINGLE_AGENT_CALL_FACTOR
        note = "single agent: 4/15 of the planned model calls"
        return model_calls, tool_calls, state_writes, note
    return model_calls, tool_calls, state_writes, "planned fan-out"


def _calls_within_token_budget(design: Design, load: Load) -> float | None:
    """Most model calls a run's token budget pays for (budget / tokens per call); ``None``
    without a budget or when a call has no tokens."""
    budget = design.orchestration.token_budget_per_run
    tokens_per_call = load.tokens.input_per_call + load.tokens.output_per_call
    if budget is None or tokens_per_call <= 0:
        return None
    return budget / tokens_per_call


def mean_arrivals_eps(
    design: Design, load: Load
) -> tuple[dict[GroupName, float], RunFanOut | None, float | None]:
    """Mean step events per second offered to each group, the fan-out per run, and runs/s.

    ``load.step_events_per_second``: every step event goes to the agent group (one model call per
    agent step), the tool and state groups are idle, and there is no fan-out (``None``, ``None``).
    ``load.runs_per_second`` r: agent r x model calls, tool r x tool calls, state r x state writes
    per run, after :func:`fan_out_per_run`.
    """
    if load.step_events_per_second is not None:
        return {"agent": load.step_events_per_second, "tool": 0.0, "state": 0.0}, None, None
    r = load.runs_per_second or 0.0
    fan = fan_out_per_run(design, load)
    arrivals: dict[GroupName, float] = {
        "agent": r * fan.model_calls,
        "tool": r * fan.tool_calls,
        "state": r * fan.state_writes,
    }
    return arrivals, fan, r
