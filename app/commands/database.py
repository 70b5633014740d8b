"""``designlab migrate`` and ``designlab create-user``: the database and its accounts."""

from __future__ import annotations

from typing import Annotated

import typer
from sqlalchemy.engine import make_url

from app.accounts import create_user
from app.commands import ExitCode
from app.db import database_status, make_engine, make_sessionmaker, session_scope, upgrade
from app.models import Role
from app.settings import get_settings


def migrate() -> None:
    """Apply every pending migration to the database at DATABASE_URL."""
    url = get_settings().database_url
    upgrade(url)
    status = database_status(make_engine(url))
    shown = make_url(url).render_as_string(hide_password=True)
    typer.echo(f"{shown}: at revision {status.get('revision')}")


def create_user_command(
    email: Annotated[str, typer.Option(help="The user's email; it is their sign-in name.")],
    role: Annotated[Role, typer.Option(help="learner or instructor.")] = Role.learner,
    password: Annotated[
        str,
        typer.Option(
            prompt=True, hide_input=True, confirmation_prompt=True, help="Prompted if left out."
        ),
    ] = "",
) -> None:
    """Create a user with a password (stored as an argon2id hash)."""
    settings = get_settings()
    upgrade(settings.database_url)
    factory = make_sessionmaker(make_engine(settings.database_url))
    try:
        for session in session_scope(factory):
            user = create_user(session, email, role, password)
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(ExitCode.BAD_INPUT) from exc
    typer.echo(f"created {user.role.value} {user.email} (id {user.id})")
