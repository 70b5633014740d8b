"""What the consumer groups' data plane calls back on when runs are causal task graphs.

:class:`World` is the base of :class:`simulator.engine.causal.CausalRuns`, the producer of a
causal run's step events. The groups (``simulator.engine.group``, ``consumers``, ``membership``)
hold their producer as a ``World``: they call it without importing the producer, which imports
them (the producer's hot loop calls the groups' methods directly, as compiled code calls compiled
code, instead of through a protocol). Compiled with the data plane (``simulator.native``).
"""

from __future__ import annotations


class World:
    """The producer of a causal run, as the groups see it: an interface, its methods raise
    NotImplementedError here (compiled code calls a plain base class's methods natively; an
    ``abc.ABC`` base would not be). Its one implementation is
    :class:`simulator.engine.causal.CausalRuns`.

    ``unpublished``: stages applied whose next events were never published (a service that died
    between the step's commit and its publish, without an outbox).
    """

    def __init__(self) -> None:
        self.unpublished: set[int] = set()

    def advance(self, until: float) -> None:
        """Bring every group's data plane to ``until`` seconds."""
        raise NotImplementedError

    def applied(self, event: int, t: float, publish: bool = True) -> None:
        """Event ``event`` was applied for the first time at ``t`` seconds (``publish`` False:
        what comes after it is never published)."""
        raise NotImplementedError

    def republish(self, event: int, t: float) -> None:
        """Event ``event`` ran again and completed at ``t`` seconds: publish what its first
        run's lost publish did not."""
        raise NotImplementedError
