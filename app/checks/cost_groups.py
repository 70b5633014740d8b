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


_WITH: tuple[tuple[str, str], ...] = (
    ("fallback_provider", "the fallback's"),
    ("repeats_", "paid repeats"),
    ("broker_storage", "their storage"),
)
"""Lines a group holds beside its main one, with the words its label adds for them ("tokens,
with the fallback's"), so that the group's dollars never read as its main line's alone."""


def _with_words(component: str) -> str | None:
    for name, words in _WITH:
        if component == name or (name.endswith("_") and component.startswith(name)):
            return words
    return None


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
    a component's own name when it belongs to none of them. A label names the lines the group
    holds beside its main one when they come to half a dollar or more: "tokens, with the
    fallback's and paid repeats", "brokers, with their storage"."""
    totals: dict[tuple[str, str], float] = {}
    extras: dict[tuple[str, str], list[str]] = {}
    for component, amount in cost.by_component.items():
        group = _group_of(component)
        totals[group] = totals.get(group, 0.0) + amount
        words = _with_words(component)
        if words is not None and amount >= 0.5 and words not in extras.setdefault(group, []):
            extras[group].append(words)
    order = {key: i for i, (key, _, _) in enumerate(_GROUPS)}
    ranked = sorted(totals.items(), key=lambda kv: (-kv[1], order.get(kv[0][0], len(order))))
    return [
        (key, _label(label, extras.get((key, label), [])), round(amount, 2))
        for (key, label), amount in ranked
    ]


def _label(label: str, extras: list[str]) -> str:
    return f"{label}, with {' and '.join(extras)}" if extras else label


COMPONENT_LABELS: dict[str, str] = {
    "model_tokens": "the model calls' tokens",
    "fallback_provider": "the fallback provider's calls",
    "repeats_steady": "model calls repeated in the peak's own run",
    "repeats_deploys": "model calls repeated after deploys",
    "repeats_worker_crashes": "model calls repeated after worker crashes",
    "repeats_rebalances": "model calls repeated after rebalances",
    "repeats_provider_outages": "model calls repeated after provider outages",
    "repeats_state_failovers": "model calls repeated after state-store failovers",
    "repeats_broker_losses": "model calls repeated after broker losses",
    "repeats_consumer_pauses": "model calls repeated after consumer pauses",
    "database_primary": "the state store's primary",
    "database_replicas": "the state store's replicas",
    "checkpoint_writes": "checkpoint writes",
    "tool_runners": "tool runners",
    "workers_agent": "agent worker instances",
    "workers_tool": "tool worker instances",
    "workers_state": "state worker instances",
    "brokers": "brokers",
    "broker_storage": "broker storage",
}
"""A bill line's label in a sentence, by its component (simulator.cost names them)."""


def cost_changes(cost: Cost, baseline: Cost) -> list[tuple[str, str, float]]:
    """What moved between two bills, line by line, as ``(component, label, usd)`` with ``usd``
    the monthly change in dollars (``cost`` minus ``baseline``; a line missing from one counts
    0 there), largest increase first; lines that moved less than half a dollar are left out.
    ``cost_changes(cost, baseline_cost)[0]`` is what the later decisions added most to."""
    names = list(dict.fromkeys([*cost.by_component, *baseline.by_component]))
    changes = [
        (
            name,
            COMPONENT_LABELS.get(name, name.replace("_", " ")),
            round(cost.by_component.get(name, 0.0) - baseline.by_component.get(name, 0.0), 2),
        )
        for name in names
    ]
    return sorted((c for c in changes if abs(c[2]) >= 0.5), key=lambda c: -c[2])


def paid_repeats_usd(cost: Cost) -> float:
    """Dollars a month of model calls paid a second time (every ``repeats_*`` line of
    simulator.cost: the peak's own repeats, after deploys, crashes and rebalances), to the cent."""
    return round(sum(v for k, v in cost.by_component.items() if k.startswith("repeats_")), 2)
