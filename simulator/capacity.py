"""What caps a consumer group's throughput: one computation shared by the estimate and the
simulation, so that the two agree on capacity and on what limits it.

A group's capacity is the smallest of its ceilings (events per second):

- partitions, and instances x concurrency, each over the step time: each partition is processed
  one event at a time, so busy partitions / step time (Little's law with every partition busy);
  the fewer of the two caps (both are listed, so a utilisation per ceiling shows each);
- the agent group: also the model provider's max_concurrency / call time, RPM / 60 and
  TPM / 60 / tokens per call;
- the tool group: also the runner fleet, runners x concurrency per runner / step time;
- the state group: also the store's provisioned write capacity.
"""

from __future__ import annotations

import math
from enum import StrEnum

from simulator.closed_forms.provider import provider_capacity_eps
from simulator.design import Design, ModelProvider
from simulator.groups import GROUPS


class LimitingFactor(StrEnum):
    """What caps a consumer group's capacity (the keys of :func:`capacity_limits`)."""

    partitions = "partitions"
    instances = "instances x concurrency"
    provider_concurrency = "provider concurrency"
    rpm = "RPM"
    tpm = "TPM"
    state_write_capacity = "state write capacity"
    tool_runners = "tool runners"


def busy_partitions(partitions: int, instances: int, concurrency_per_instance: int) -> int:
    """Partitions a consumer group can work on at once: min(partitions, instances x concurrency).

    Exact for every Kafka assignor here: each assigns a single topic balanced to within one
    partition per member, and with integer concurrency c either c <= floor(P/I) (every member is
    full: I x c busy) or c >= ceil(P/I) (every partition is busy). Raises ``ValueError`` for a
    negative argument.
    """
    if partitions < 0 or instances < 0 or concurrency_per_instance < 0:
        raise ValueError("partitions, instances and concurrency must be >= 0")
    return min(partitions, instances * concurrency_per_instance)


def capacity_eps(busy: float, step_time_s: float) -> float:
    """Throughput of ``busy`` partitions each processing one event at a time: busy / step time.

    By Little's law with every partition busy (L = busy, W = step time). ``capacity_eps(48, 2.0)``
    is 24 events/s. Raises ``ValueError`` for a step time <= 0 or negative ``busy``.
    """
    if step_time_s <= 0:
        raise ValueError(f"step_time_s must be > 0, got {step_time_s}")
    if busy < 0:
        raise ValueError(f"busy partitions must be >= 0, got {busy}")
    return busy / step_time_s


def _per_step(slots: int, step_s: float) -> float:
    """``slots`` worked one event at a time: slots / step time, no ceiling for instant steps."""
    return capacity_eps(slots, step_s) if step_s > 0 else math.inf


def capacity_limits(
    design: Design,
    group: str,
    step_s: float,
    tokens_per_call: int,
    *,
    instances: int | None = None,
    provider: ModelProvider | None = None,
) -> dict[str, float]:
    """Every ceiling on ``group``'s throughput in events per second, keyed by
    :class:`LimitingFactor` value (rules in the module docstring).

    ``step_s``: the group's mean step time in seconds (a model call's latency for the agent
    group); a step of 0 s sets no ceiling. ``tokens_per_call``: input plus output tokens of a
    model call. ``instances``: the members alive (default: the design's instances).
    ``provider``: the model provider serving the agent group (default: the primary). Raises
    ``ValueError`` when ``group`` is not one of :data:`simulator.groups.GROUPS`.
    """
    if group not in GROUPS:
        raise ValueError(f"no consumer group {group!r}; the groups are {', '.join(GROUPS)}")
    partitions = design.event_log.partitions
    cg = getattr(design.consumers, group)
    alive = cg.instances if instances is None else instances
    slots = alive * cg.concurrency_per_instance
    limits = {
        LimitingFactor.partitions.value: _per_step(partitions, step_s),
        LimitingFactor.instances.value: _per_step(slots, step_s),
    }
    if group == "agent":
        p = provider_capacity_eps(provider or design.model.primary, step_s, tokens_per_call)
        limits[LimitingFactor.provider_concurrency.value] = p["concurrency"]
        limits[LimitingFactor.rpm.value] = p["rpm"]
        limits[LimitingFactor.tpm.value] = p["tpm"]
    elif group == "tool":
        runners = design.tools.runners * design.tools.concurrency_per_runner
        limits[LimitingFactor.tool_runners.value] = _per_step(runners, step_s)
    else:
        limits[LimitingFactor.state_write_capacity.value] = (
            design.state_store.write_capacity_per_second
        )
    return limits


def smallest_limit(limits: dict[str, float]) -> tuple[float, LimitingFactor]:
    """The capacity (the smallest ceiling of :func:`capacity_limits`) and what sets it; the first
    listed wins a tie. Raises ``ValueError`` for no limits."""
    if not limits:
        raise ValueError("no capacity limits")
    best_name = next(iter(limits))
    best = limits[best_name]
    for name, value in limits.items():
        if value < best:
            best_name, best = name, value
    return best, LimitingFactor(best_name)
