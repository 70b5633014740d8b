"""The shortest ``max.poll.interval.ms`` the decision form accepts for the agent group, given
the design's partitions and agent instances: the joint bound that keeps the heaviest course
scenario (``replay``) within 2 s of simulation on one core.

Why a joint bound: in ``replay`` the agent group comes back to a backlog whose batches outlast a
short ``max.poll.interval.ms``, so its members are kicked and rejoin over and over (a rebalance
storm). A storm costs about one assignor pass per interval, and each pass reassigns every
partition among every member, so a run costs about ``window / interval x (partitions +
instances)`` on top of the ~0.5 s the replay costs without a storm. A second of interval for
every whole :data:`PARTITIONS_AND_INSTANCES_PER_SECOND` partitions and agent instances keeps the
reference's own shortest (96 + 8 at 1 s, the course's short-interval lesson) and the largest
design step 7 accepts (4,096 + 1,024 at 85 s) within 2 s: benchmarks/scaling.py's storm rows
marked "form's shortest", quoted in docs/simulator-model.md ("Rebalance storms"), one core.
"""

from __future__ import annotations

from simulator.design import Design

PARTITIONS_AND_INSTANCES_PER_SECOND = 60
"""Partitions plus agent instances per second of ``max.poll.interval.ms`` (see the module
docstring for the measurement)."""

FORM_SHORTEST_MS = 1_000
"""The form's own shortest interval (step 9's decision), whatever the design's size."""

INTERVAL_FIELD = "consumers.agent.max_poll_interval_ms"
SIZE_FIELDS = ("event_log.partitions", "consumers.agent.instances")
"""The design fields the joint bound reads, by design path."""


def shortest_poll_interval_ms(partitions: int, instances: int) -> int:
    """The shortest agent ``max.poll.interval.ms`` (ms, a whole second) the form accepts with
    ``partitions`` partitions and ``instances`` agent instances: one second per
    :data:`PARTITIONS_AND_INSTANCES_PER_SECOND` whole of them, never below
    :data:`FORM_SHORTEST_MS` (96 + 8 -> 1,000 ms; 4,096 + 1,024 -> 85,000 ms)."""
    seconds = (partitions + instances) // PARTITIONS_AND_INSTANCES_PER_SECOND
    return max(FORM_SHORTEST_MS, 1000 * seconds)


def most_partitions_and_instances(interval_ms: float) -> int:
    """The most partitions plus agent instances the form accepts with an agent
    ``max.poll.interval.ms`` of ``interval_ms``: the largest total whose
    :func:`shortest_poll_interval_ms` is at most ``interval_ms``."""
    seconds = int(interval_ms // 1000)
    if seconds < 1:
        return 0
    # total // k <= seconds  <=>  total < (seconds + 1) x k
    return (seconds + 1) * PARTITIONS_AND_INSTANCES_PER_SECOND - 1


def floor_of(design: Design) -> int:
    """:func:`shortest_poll_interval_ms` for ``design``'s partitions and agent instances."""
    return shortest_poll_interval_ms(design.event_log.partitions, design.consumers.agent.instances)


def refusal(design: Design, decided: set[str]) -> tuple[str, str] | None:
    """Why the form refuses ``design`` for its size and agent interval, as ``(field, message)``
    on the first of the step's ``decided`` fields the bound reads (the interval first), or None
    when it is within the bound or the step decides none of them."""
    interval = design.consumers.agent.max_poll_interval_ms
    floor = floor_of(design)
    if interval >= floor:
        return None
    partitions = design.event_log.partitions
    instances = design.consumers.agent.instances
    total = f"{partitions:,} partitions and {instances:,} agent instances"
    if INTERVAL_FIELD in decided:
        return INTERVAL_FIELD, (
            f"Enter at least {floor:,} ms for {total}: one second per "
            f"{PARTITIONS_AND_INSTANCES_PER_SECOND} of them, or a replay's rebalance storm "
            f"takes more than 2 s to simulate; got {interval:,.0f}."
        )
    most = most_partitions_and_instances(interval)
    for name in SIZE_FIELDS:
        if name in decided:
            return name, (
                f"With max.poll.interval.ms at {interval:,.0f} ms, partitions plus agent "
                f"instances may total at most {most:,} (one second per "
                f"{PARTITIONS_AND_INSTANCES_PER_SECOND}, so a replay's rebalance storm simulates "
                f"in 2 s); {total} total {partitions + instances:,}. Lower them, or raise "
                "max.poll.interval.ms first."
            )
    return None


def note(design: Design, name: str, field_max: float | None) -> str:
    """The sentence shown beside field ``name`` of the form about the joint bound ("" when the
    bound does not narrow the field: for a size field, when the most it allows beside the other
    size is at least ``field_max``, the field's own largest value)."""
    if name == INTERVAL_FIELD:
        floor = floor_of(design)
        partitions = design.event_log.partitions
        instances = design.consumers.agent.instances
        return (
            f"At least {floor:,} ms here: one second per {PARTITIONS_AND_INSTANCES_PER_SECOND} "
            f"partitions and agent instances ({partitions:,} + {instances:,}), so a replay's "
            "rebalance storm simulates in 2 s."
        )
    if name in SIZE_FIELDS:
        interval = design.consumers.agent.max_poll_interval_ms
        most = most_partitions_and_instances(interval)
        sizes = {
            "event_log.partitions": design.event_log.partitions,
            "consumers.agent.instances": design.consumers.agent.instances,
        }
        other = sum(v for k, v in sizes.items() if k != name)
        if field_max is not None and most - other >= field_max:
            return ""
        return (
            f"Partitions plus agent instances may total at most {most:,} while "
            f"max.poll.interval.ms is {interval:,.0f} ms (one second per "
            f"{PARTITIONS_AND_INSTANCES_PER_SECOND}, so a replay's rebalance storm simulates in "
            "2 s)."
        )
    return ""
