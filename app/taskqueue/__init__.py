"""Simulations on a distributed task queue (Celery on Redis), used when REDIS_URL is set.

- :mod:`app.taskqueue.queue_app`: the Celery application and its settings (late acknowledgement,
  time limits, the broker's visibility timeout), configured from designlab's Settings;
- :mod:`app.taskqueue.jobs`: the job a worker runs (``designlab worker``): the shared result
  cache first, then the simulation within the size and wall-time budgets, the result stored once;
- :mod:`app.taskqueue.client`: the web side, a ``SimulationPool`` that enqueues and waits without
  blocking the event loop (app/simpool.py's ``configure`` takes it as the backend);
- :mod:`app.taskqueue.status`: the broker, the workers and the queue depth, for /healthz and
  /metrics.

Without REDIS_URL nothing here is used: the app's own process pool runs the simulations.
docs/scale-out.md says why Celery and how the pieces fit.
"""
