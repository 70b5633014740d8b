"""What a run lost, every kind counted: events the log or its consumers lost, next events a
step committed but never published (the dual write), acknowledged state writes a failover took.
The "Events lost" figure is their sum, its caption the kinds that are not zero."""

from __future__ import annotations

from dataclasses import dataclass

from simulator.result import Metrics


@dataclass(frozen=True)
class LossPart:
    """One kind of loss of a run and how many."""

    count: int
    singular: str
    plural: str

    @property
    def text(self) -> str:
        """``count`` with its noun, e.g. "8 next events never published"."""
        return f"{self.count:,} {self.singular if self.count == 1 else self.plural}"


@dataclass(frozen=True)
class Losses:
    """Every loss a run reports, the kinds with none left out."""

    parts: tuple[LossPart, ...]

    @property
    def total(self) -> int:
        """All the losses of the run together (0: nothing lost)."""
        return sum(p.count for p in self.parts)

    @property
    def caption(self) -> str:
        """The breakdown of ``total`` by kind, or that nothing was lost."""
        if not self.parts:
            return "No event, published step or acknowledged state write lost"
        return "; ".join(p.text for p in self.parts)


_LOST = "lost with a broker"
_SKIPPED = "skipped by an offset reset"


def losses(m: Metrics) -> Losses:
    """The losses of a run with metrics ``m``: ``lost`` broken into the broker's, the offset
    resets', the dropped poison events and the rest, then ``publishes_lost`` and
    ``state_writes_lost``."""
    poison = m.poison_dropped or 0
    rest = max(0, m.lost - m.log_lost - m.offset_reset_skipped - poison)
    parts = (
        LossPart(m.log_lost, f"acknowledged event {_LOST}", f"acknowledged events {_LOST}"),
        LossPart(m.offset_reset_skipped, f"unread event {_SKIPPED}", f"unread events {_SKIPPED}"),
        LossPart(poison, "poison event dropped", "poison events dropped"),
        LossPart(rest, "event lost", "events lost"),
        LossPart(
            m.publishes_lost or 0, "next event never published", "next events never published"
        ),
        LossPart(
            m.state_writes_lost,
            "acknowledged state write vanished",
            "acknowledged state writes vanished",
        ),
    )
    return Losses(tuple(p for p in parts if p.count))
