"""The step format: steps/course.yaml and one folder per step (``step.yaml`` + ``narrative.md``).

Authored without Python. Every field is documented in steps/README.md (a test keeps them in step).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

ScenarioName = str
DesignPath = str
"""A dotted path into the design file, such as ``event_log.partitions``."""


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


class Choice(_Doc):
    """One option of a select or radio decision. ``also``: other design fields the option sets
    with it (dotted path -> value), so one plausible choice can bundle values that only make
    sense together (acks=all with the idempotent producer; a cache off, or keyed one way)."""

    value: str | int | float | bool | None
    label: str
    also: dict[str, str | int | float | bool | None] = Field(default_factory=dict)


class Decision(_Doc):
    """A form field that sets one design value."""

    field: DesignPath = Field(description="Dotted path into the design, e.g. delivery.commit.")
    label: str
    help: str = ""
    widget: Literal["select", "radio", "number", "checkbox", "text"] = "select"
    choices: list[Choice] = Field(default_factory=list)
    unit: str = ""
    min: float | None = None
    max: float | None = None
    step: float | None = None


class Needs(_Doc):
    """What a check must have seen to judge anything: ``expr`` is evaluated before the check's
    own (same names); when it is false the check is *not exercised* and scores 0, saying
    ``missing`` (e.g. "no model call was made"), a template over the same names as ``explain``
    so that it can say what the run lacked with the run's numbers."""

    expr: str = Field(description="True when the run exercised what the check judges.")
    missing: str = Field(
        min_length=1,
        description="What the run lacked, as a clause: 'no model call was made' (a template).",
    )


class Check(_Doc):
    """A graded check: a safe expression over the design and the simulation's figures.

    ``expr`` is evaluated with simpleeval (never eval) over the names listed in steps/README.md
    (``design``, ``metrics``, ``cost``, ``scenario``, ``estimate``). ``explain`` is a sandboxed
    Jinja template over the same names that shows the formula with the learner's numbers.
    """

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    title: str
    points: int = Field(ge=0, le=100)
    expr: str
    pass_message: str = Field(
        alias="pass", description="Shown when it passes; a template over the same names."
    )
    fail_message: str = Field(
        alias="fail", description="Shown when it fails; a template over the same names."
    )
    explain: str
    hint: str = Field(
        "",
        description="What to change; a template over the same names, so it can point at the "
        "decision that moves the figure the run shows (rendered after a pass or a fail).",
    )
    concept: str = Field("", description="Anchor of the narrative paragraph that teaches it.")
    scenario: ScenarioName | None = Field(
        None, description="Scenario whose metrics this check reads; default the step's scenario."
    )
    needs: Needs | None = Field(
        None, description="What the run must exercise before the check can judge it."
    )
    baseline_step: int | None = Field(
        None,
        ge=1,
        description="An earlier step's number: the check also sees ``baseline_cost``, the month "
        "of its scenario for the design as that step judges it (the decisions after it at the "
        "course's neutral values), so it can judge what the later decisions add.",
    )

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Step(_Doc):
    """One step of the course: ``<folder>/step.yaml``, with ``narrative.md`` beside it."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    title: str
    summary: str = Field(description="The first paragraph: what this step is about.")
    minutes: float = Field(4, gt=0, le=60)
    scenario: ScenarioName | None = Field(None, description="Scenario file name in scenarios/.")
    decisions: list[Decision] = Field(default_factory=list)
    checks: list[Check] = Field(default_factory=list)
    recap: str = ""
    figures: dict[str, str] = Field(
        default_factory=dict,
        description="Named expressions (same names as a check's expr) evaluated against the "
        "reference design and the step's scenario; narrative.md shows them as {{ figures.name }}.",
    )


class KnownBad(_Doc):
    """A design that must fail exactly the named checks (course self-test)."""

    file: str
    fails: list[str] = Field(min_length=1)
    unjudged: list[str] = Field(
        default_factory=list,
        description="Checks this design's runs leave with nothing to judge on some seeds (not "
        "exercised) and judge on others (a pass): either counts as intended; a fail does not.",
    )
    why: str = ""


class Course(_Doc):
    """steps/course.yaml."""

    version: Literal[1] = 1
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    title: str
    difficulty: str
    minutes: int = Field(gt=0, le=600)
    summary: str
    problem: str
    how_it_works: list[str]
    what_you_build: list[str]
    budget_usd: float = Field(gt=0)
    pricing: str = Field("pricing.yaml", description="Pricing catalog file, relative to steps/.")
    reference_design: str = Field("designs/reference.yaml")
    known_bad: list[KnownBad] = Field(default_factory=list)
    steps: list[str] = Field(min_length=1, description="Step folder names, in order.")
