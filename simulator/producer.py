"""How a produced step event reaches the event log: the producer's tick (no numpy, so the
estimate can read it without loading the engine)."""

PRODUCE_TICK_S = 0.02
"""Seconds between the ticks on which produced step events reach the log: the producer's linger,
the broker's append and the consumer's fetch, 0-20 ms, 10 ms on average per hop
(``simulator.engine.causal``)."""
