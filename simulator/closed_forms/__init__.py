"""Closed forms: pure arithmetic (microseconds per call) behind the live estimate and the checks.

Each module holds one idea, and each function's docstring names its formula's source. Units: rates
in step events per second (``_eps``), times in seconds (``_s``) unless the name says ``_ms``.

- :mod:`~simulator.closed_forms.drain`: Little's law, utilisation, backlog after an outage and the
  time to drain it (J. D. C. Little, "A Proof for the Queuing Formula L = lambda W", Operations
  Research 9(3), 1961; a fluid approximation of a queue after a service interruption).
- :mod:`~simulator.closed_forms.batches`: a poll batch's processing time, Kafka's
  max.poll.interval.ms, and the events a crash redelivers.
- :mod:`~simulator.closed_forms.queueing`: Kingman's G/G/1 wait (exact Pollaczek-Khinchine for
  M/G/1), Erlang B and C and the M/M/c wait (Erlang 1917; L. Kleinrock, "Queueing Systems,
  Volume 1: Theory", Wiley 1975, ch. 3).
- :mod:`~simulator.closed_forms.provider`: a model provider's tokens a minute and ceilings.
- :mod:`~simulator.closed_forms.saga`: the chance of each outcome of a saga (Garcia-Molina and
  Salem, "Sagas", SIGMOD 1987).

Capacity itself (what caps a consumer group) is :mod:`simulator.capacity`, shared by the estimate
and the simulation.
"""
