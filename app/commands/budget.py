"""The simulation budgets of ``designlab grade`` and ``designlab simulate``: the server's own.

``--max-step-events`` (default ``SIM_MAX_STEP_EVENTS``) refuses a simulation expected to go
through more simulated events before any work; ``--timeout-seconds`` (default
``SIM_TIMEOUT_SECONDS``) stops one that runs longer. Both refusals name the field that makes the
simulation big or slow (app.sim_budget) and exit 2 (bad input), as the server answers 422.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Annotated

import typer

from app.settings import get_settings

if TYPE_CHECKING:
    from app.grading.grader import Simulate

MaxStepEvents = Annotated[
    int | None,
    typer.Option(
        "--max-step-events",
        min=1,
        help="Refuse a simulation expected to go through more simulated events (step events "
        "plus watchdog looks); default SIM_MAX_STEP_EVENTS (2,000,000).",
    ),
]
TimeoutSeconds = Annotated[
    float | None,
    typer.Option(
        "--timeout-seconds",
        min=0.001,
        help="Stop a simulation that runs longer (wall time); default SIM_TIMEOUT_SECONDS (30).",
    ),
]


def budgeted(
    max_step_events: int | None, timeout_seconds: float | None, *, scenario_is_input: bool = False
) -> Simulate:
    """``simulator.simulate`` within the given budgets (None: the settings' own).
    ``scenario_is_input``: the scenario came from the user's own file, so a run over the time
    budget with nothing in the design to blame names its duration (bad input) instead of the
    machine (app.sim_budget.simulate_within).

    The budgets load the simulator's engine (numpy, SimPy) when a command asks for them, so
    ``designlab lint``, ``schema`` and ``--help``, which never simulate, do not load it."""
    from app.sim_budget import simulate_within

    settings = get_settings()
    return partial(
        simulate_within,
        max_step_events=max_step_events or settings.sim_max_step_events,
        timeout_seconds=timeout_seconds or settings.sim_timeout_seconds,
        scenario_is_input=scenario_is_input,
    )
