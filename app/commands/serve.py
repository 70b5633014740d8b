"""``designlab serve``: apply migrations, then serve the app with uvicorn (both loaded when the
command runs, not for every command)."""

from __future__ import annotations

from typing import Annotated

import typer

from app.settings import get_settings


def serve(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port to listen on.")] = 8000,
    reload: Annotated[
        bool, typer.Option(help="Restart when Python or template files change.")
    ] = False,
) -> None:
    """Migrate the database, then serve designlab at http://HOST:PORT."""
    import os

    import uvicorn

    from app.db import upgrade

    # The app a server runs starts its simulation workers at once (app.settings.sim_warm_pool).
    os.environ.setdefault("SIM_WARM_POOL", "1")
    settings = get_settings()
    upgrade(settings.database_url)
    uvicorn.run(
        "app.main:create_app",
        factory=True,
        host=host,
        port=port,
        reload=reload,
        reload_dirs=["app", "simulator", "templates"] if reload else None,
        reload_includes=["*.py", "*.html"] if reload else None,
        proxy_headers=False,  # the app reads them itself, trusting FORWARDED_ALLOW_IPS only
    )
