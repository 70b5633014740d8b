"""The live estimate panel: closed-form figures for the decisions as they stand in the form.

``POST /steps/{slug}/estimate`` takes the decision form as it is being edited (htmx sends it
300 ms after the last keystroke) and answers the ``estimate`` block of the step page: capacity,
utilisation, events in flight, drain time and the monthly cost against the budget, from
``simulator.estimate.estimate`` and ``simulator.cost.monthly_cost``. It saves nothing, so it
needs no CSRF token; a value that does not validate is reported in the panel.
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from app.course.content import LoadedStep
from app.course.step_design import step_design
from app.grading.grader import CourseMaterial
from app.web.forms import read_decisions
from app.web.step_request import StepDep
from app.web.templating import render
from simulator.closed_forms.queueing import saturated
from simulator.cost import monthly_cost
from simulator.design import Design
from simulator.estimate import Estimate, estimate
from simulator.estimate.recovery import Recovery
from simulator.estimate.runs import critical_path_s
from simulator.fan_out import run_tasks
from simulator.groups import GroupName
from simulator.result import Cost

router = APIRouter()


@dataclass(frozen=True)
class EstimateView:
    """What the panel shows: the estimate and the closed-form monthly cost for one scenario."""

    scenario: str
    estimate: Estimate
    cost: Cost
    has_faults: bool
    problems: tuple[str, ...] = ()
    """Form values that did not validate; the figures are then those of the saved design."""
    critical_path_s: float | None = None
    """With causal runs, one run's critical path if nothing queued, seconds: the time over which
    the runs a fault stalled release its backlog as they resume (the estimate's "Released in
    order", simulator.estimate.recovery); None for open-loop events."""
    backlog_at_end: float | None = None
    """With causal runs, the drain group's backlog when the last fault ends, which the drain
    starts from (simulator.estimate.recovery); the estimate's ``backlog`` is the largest it
    reached, which a scenario of several faults may have worked off in part between them. None
    for open-loop events: the worst outage's backlog is then the one that drains."""

    @property
    def drain_backlog(self) -> float:
        """The backlog the drain time is counted for: the drain group's when the last fault
        ends; the largest one for open-loop events, or when none is left then (the queues took
        it all as the runs resumed, before the last fault window closed)."""
        at_end = self.backlog_at_end
        return self.estimate.backlog if at_end is None or at_end < 0.5 else at_end

    @property
    def worked_off_before(self) -> bool:
        """True when the largest backlog is larger than the one the drain is counted for (by at
        least one event): the faults' queues worked part of it off before the last ended."""
        return self.estimate.backlog >= self.drain_backlog + 1

    @property
    def over_budget(self) -> bool:
        """True when the month costs more than the budget."""
        return self.cost.over_budget

    @property
    def budget_share(self) -> float:
        """Monthly cost as a fraction of the budget."""
        return self.cost.budget_share

    @property
    def kept_up(self) -> bool:
        """True when the fault holds a backlog that never queues: the stalled runs release it
        over about one critical path as they resume, and the drain group's headroom over that
        time covers it, so the queues take it as it comes (the estimate's "Released in order",
        simulator.estimate.recovery). The drain is then 0, or the wait before the held runs
        move again (a rejoin, the callers' next retry); the runs finish late by the stall."""
        e = self.estimate
        if e.drain_group is None or e.drain_seconds is None or self.critical_path_s is None:
            return False
        return 0.5 <= self.drain_backlog <= self.headroom_eps * self.critical_path_s

    @property
    def unbounded(self) -> bool:
        """True when the bottleneck group gets as much as it can take or more (load and no
        capacity included): its queue grows without bound, so events in flight have no figure."""
        return saturated(self.estimate.utilisation)

    @property
    def headroom_eps(self) -> float:
        """The drain group's capacity above its arrivals, events/s (0 without a drain group)."""
        e = self.estimate
        if e.drain_group is None:
            return 0.0
        g = e.by_group[e.drain_group]
        return max(0.0, g.capacity_eps - g.arrivals_eps)


def estimate_view(
    design: Design, material: CourseMaterial, step: LoadedStep, problems: tuple[str, ...] = ()
) -> EstimateView | None:
    """The estimate of the design ``step`` judges (``design``'s decisions up to the step, the
    course's neutral values for the rest: app.course.step_design) under the step's scenario;
    None for a step without one."""
    name = step.step.scenario if step.step is not None else None
    scenario = material.loaded.scenarios.get(name) if name else None
    if name is None or scenario is None:
        return None
    design = step_design(material.loaded, step, design)
    cost = monthly_cost(design, scenario, material.pricing, budget_usd=material.course.budget_usd)
    recoveries: dict[GroupName, Recovery] = {}
    figures = estimate(design, scenario, recoveries=recoveries)
    critical = None
    if scenario.load.run_model == "causal" and figures.runs_per_second:
        critical = critical_path_s(design, scenario.load, run_tasks(design, scenario.load))
    drained = recoveries.get(figures.drain_group) if figures.drain_group else None
    at_end = drained.backlog if drained is not None else None
    return EstimateView(name, figures, cost, bool(scenario.faults), problems, critical, at_end)


def _labelled(step: LoadedStep, errors: dict[str, str]) -> tuple[str, ...]:
    labels = {d.field: d.label for d in step.step.decisions} if step.step else {}
    return tuple(
        f"{labels[path]}: {message}" if path in labels else message
        for path, message in errors.items()
    )


@router.post("/steps/{slug}/estimate", name="estimate")
async def live_estimate(at: StepDep) -> Response:
    """The estimate panel for the submitted (unsaved) decisions; saves nothing."""
    step = at.step
    form = {k: v for k, v in (await at.request.form()).items() if isinstance(v, str)}

    def answer() -> Response:
        context = at.page_context()
        design: Design = context["design"]
        problems: tuple[str, ...] = ()
        if step.available and step.step is not None:
            edited, errors = read_decisions(step.step, form, design)
            if edited is None:
                problems = _labelled(step, errors)
            else:
                design = edited
        context["estimate"] = estimate_view(design, at.material, step, problems)
        return render(at.request, "step.html", context, block="estimate")

    return await run_in_threadpool(answer)
