"""The monthly bill's lines grouped by what moves them, for a check's text: tokens (first-time
calls, the fallback's extra, every kind of repeat), the state store (its primary and replicas),
checkpoint writes, tool runners, worker instances, brokers. A budget check names the largest
group and points its hint at the decisions that move it."""

from __future__ import annotations

from simulator.result import Cost

_GROUPS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("tokens", "tokens", ("model_tokens", "fallback_provider", "repeats_")),
    ("state_store", "the state store", ("database_",)),
    ("checkpoints", "checkpoint writes", ("checkpoint_writes",)),
    ("tool_runners", "tool runners", ("tool_runners",)),
    ("workers", "worker instances", ("workers_",)),
    ("brokers", "brokers", ("brokers", "broker_storage")),
)
"""Each group's key, its label and the cost components (or their prefixes, ending in ``_``) it
holds; simulator.cost names the components."""


def _group_of(component: str) -> tuple[str, str]:
    for key, label, names in _GROUPS:
        for name in names:
            if component == name or (name.endswith("_") and component.startswith(name)):
                return key, label
    return component, component.replace("_", " ")


def cost_groups(cost: Cost) -> list[tuple[str, str, float]]:
    """``cost``'s dollars a month per group as ``(key, label, usd)``, largest first (ties in
    the order of the groups): ``cost_groups(cost)[0]`` is what most of the bill is. Keys are
    ``tokens``, ``state_store``, ``checkpoints``, ``tool_runners``, ``workers``, ``brokers``, or
    a component's own name when it belongs to none of them."""
    totals: dict[tuple[str, str], float] = {}
    for component, amount in cost.by_component.items():
        group = _group_of(component)
        totals[group] = totals.get(group, 0.0) + amount
    order = {key: i for i, (key, _, _) in enumerate(_GROUPS)}
    ranked = sorted(totals.items(), key=lambda kv: (-kv[1], order.get(kv[0][0], len(order))))
    return [(key, label, round(amount, 2)) for (key, label), amount in ranked]
