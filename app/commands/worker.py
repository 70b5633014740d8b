"""``designlab worker``: run simulations from the task queue (REDIS_URL) on this machine."""

from __future__ import annotations

import logging
import socket
from typing import Annotated

import typer

from app.errors import BadInput
from app.settings import get_settings

QUIET_LOGGERS = ("celery.app.trace", "celery.worker.strategy")


def worker_command(
    concurrency: Annotated[
        int,
        typer.Option(help="Simulation processes; 0: SIM_WORKERS, else one per CPU core.", min=0),
    ] = 0,
    name: Annotated[
        str, typer.Option(help="This worker's name (default: designlab-PID@host name).")
    ] = "",
) -> None:
    """Take simulation jobs from the task queue at REDIS_URL and run them; results go to the
    shared result cache in DATABASE_URL. Start as many as you like, on any machine that reaches
    both. Stops on Ctrl-C or SIGTERM after the jobs it runs (a SIGKILLed worker's jobs go to
    another worker after TASK_VISIBILITY_TIMEOUT_SECONDS)."""
    settings = get_settings()
    if not settings.redis_url:
        raise BadInput(
            "REDIS_URL is not set: a worker takes its jobs from the task queue on Redis "
            "(e.g. REDIS_URL=redis://127.0.0.1:6379/0)."
        )
    from app.db import upgrade
    from app.logs import configure_logging

    configure_logging(settings.log_level)
    for noisy in QUIET_LOGGERS:  # they log every job's arguments (a whole design) and answer
        logging.getLogger(noisy).setLevel(logging.WARNING)
    upgrade(settings.database_url)
    from app.taskqueue import jobs  # registers the job with the Celery application
    from app.taskqueue.queue_app import QUEUE, configure, default_concurrency

    celery = configure(settings)
    assert jobs.simulate_job.name in celery.tasks
    processes = concurrency or default_concurrency(settings)
    hostname = name or f"designlab-%i@{socket.gethostname()}"
    celery.worker_main(
        [
            "worker",
            f"--concurrency={processes}",
            f"--hostname={hostname}",
            f"--queues={QUEUE}",
            f"--loglevel={settings.log_level}",
            "--pool=prefork",
            "--without-gossip",
            "--without-mingle",
        ]
    )
