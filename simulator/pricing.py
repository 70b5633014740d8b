"""The pricing catalog (steps/pricing.yaml): what each component of a design costs.

Prices are illustrative list prices, dated by ``as_of``, in US dollars; every field carries its unit
in its name (``_usd_per_hour``, ``_usd_per_million_tokens``, ``_usd_per_gb_month``). The catalog is
course data: an instructor changes a price in YAML, never in code. ``simulator.cost`` turns a
design, a scenario's month of load and this catalog into a monthly bill.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from simulator.files import load_model, read_text
from simulator.groups import GroupName


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BrokerPricing(_Part):
    """The event log's brokers and the disk their replicated partitions fill."""

    instance_usd_per_hour: float = Field(ge=0, le=1000, description="One broker instance.")
    storage_usd_per_gb_month: float = Field(ge=0, le=100, description="Disk, per GB kept a month.")
    event_bytes: int = Field(
        ge=1, le=10_000_000, description="Stored size of one step event (record and overhead)."
    )


class WorkerPricing(_Part):
    """One instance of each consumer group."""

    agent_instance_usd_per_hour: float = Field(ge=0, le=1000)
    tool_instance_usd_per_hour: float = Field(ge=0, le=1000)
    state_instance_usd_per_hour: float = Field(ge=0, le=1000)

    def instance_usd_per_hour(self, group: GroupName) -> float:
        """Hourly price of one instance of consumer group ``group`` (agent, tool or state)."""
        prices: dict[GroupName, float] = {
            "agent": self.agent_instance_usd_per_hour,
            "tool": self.tool_instance_usd_per_hour,
            "state": self.state_instance_usd_per_hour,
        }
        return prices[group]


class ToolRunnerPricing(_Part):
    """The tool-runner fleet that executes side-effecting tool calls."""

    runner_usd_per_hour: float = Field(ge=0, le=1000)


class DatabasePricing(_Part):
    """The state store: a primary and its replicas, sized by provisioned write capacity.

    One instance provides ``writes_per_second_per_instance``; a design asking for more write
    capacity pays for ceil(capacity / that) instance units, on the primary and on each replica.
    Writes are billed per million on top (``usd_per_million_writes``): the checkpoint writes.
    """

    primary_usd_per_hour: float = Field(ge=0, le=1000)
    replica_usd_per_hour: float = Field(ge=0, le=1000)
    writes_per_second_per_instance: float = Field(gt=0, le=10_000_000)
    usd_per_million_writes: float = Field(
        0.2,
        ge=0,
        le=10_000,
        description="I/O price of writes (Amazon Aurora standard: $0.20 per million requests).",
    )


class ProviderPrice(_Part):
    """Token prices of one model provider."""

    input_usd_per_million_tokens: float = Field(ge=0, le=10_000)
    output_usd_per_million_tokens: float = Field(ge=0, le=10_000)
    cached_input_discount: float = Field(
        0.0,
        ge=0,
        le=1,
        description="Fraction taken off the input price for input read from the provider's "
        "prompt cache (0.9: cached input costs 10 % of the list price).",
    )

    @property
    def cached_input_usd_per_million_tokens(self) -> float:
        """Price of one million cached input tokens, in US dollars."""
        return self.input_usd_per_million_tokens * (1 - self.cached_input_discount)


class ModelPricing(_Part):
    """Model providers by name, and which entry prices a design's primary and fallback.

    A design's provider is priced by its ``name`` when the catalog lists that name, else by the
    catalog entry named in ``primary`` (for ``model.primary``) or ``fallback`` (for
    ``model.fallback``).
    """

    providers: dict[str, ProviderPrice] = Field(min_length=1)
    primary: str = Field(
        description="Entry that prices a primary provider the catalog does not name."
    )
    fallback: str = Field(
        description="Entry that prices a fallback provider the catalog does not name."
    )
    repeat_input_cached_share: float = Field(
        0.0,
        ge=0,
        le=1,
        description="Share of a repeated call's input tokens billed at the cached-input price: the "
        "same prompt was sent minutes earlier, so the provider's prompt cache may still hold it.",
    )

    @model_validator(mode="after")
    def _roles_named(self) -> ModelPricing:
        for role in ("primary", "fallback"):
            name = getattr(self, role)
            if name not in self.providers:
                raise ValueError(f"{role} names provider {name!r}, which is not in providers")
        return self

    def price_for(self, provider_name: str, role: Literal["primary", "fallback"]) -> ProviderPrice:
        """The price entry of a design's provider: by its name, else by its role's default."""
        if provider_name in self.providers:
            return self.providers[provider_name]
        return self.providers[self.primary if role == "primary" else self.fallback]


class Pricing(_Part):
    """The whole catalog (``version: 1``), loaded from steps/pricing.yaml."""

    version: Literal[1] = 1
    as_of: date = Field(description="Date the illustrative prices were taken.")
    currency: Literal["USD"] = "USD"
    note: str = Field("", max_length=2000)
    brokers: BrokerPricing
    workers: WorkerPricing
    tool_runners: ToolRunnerPricing
    database: DatabasePricing
    model: ModelPricing


def load_pricing(path: Path) -> Pricing:
    """Load a pricing catalog; raise InputFileError naming file, line and field of every problem."""
    return load_model(Pricing, read_text(path), str(path))
