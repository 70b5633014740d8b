"""``designlab migrate``, ``create-user``, ``set-password`` and ``remove-user``: the database and
its accounts. A new password and a removal end the account's sessions on every device.

The database (SQLAlchemy, Alembic, app.db, app.models) and the password hashing load inside the
commands, when one of them runs: ``designlab grade``, ``simulate`` and ``lint`` never load them
(tests/app/test_cli_imports.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from app.commands import ExitCode
from app.errors import NotFound
from app.roles import Role
from app.settings import get_settings

if TYPE_CHECKING:
    from app.models import User


def migrate() -> None:
    """Apply every pending migration to the database at DATABASE_URL."""
    from sqlalchemy.engine import make_url

    from app.db import database_status, make_engine, upgrade

    url = get_settings().database_url
    upgrade(url)
    status = database_status(make_engine(url))
    shown = make_url(url).render_as_string(hide_password=True)
    typer.echo(f"{shown}: at revision {status.get('revision')}")


T = TypeVar("T")

PasswordOption = Annotated[
    str,
    typer.Option(
        prompt=True,
        hide_input=True,
        confirmation_prompt=True,
        show_default=False,
        help="Prompted if left out.",
    ),
]
"""A password typed twice at a hidden prompt unless given. The prompts read "Password:" and
"Repeat for confirmation:" (no empty default shown as "[]")."""


def _on_accounts(change: Callable[..., T], *args: object) -> T:
    """Migrate, then run ``change(session, *args)`` in one committed transaction; a ValueError
    or NotFound it raises exits 2 with its message (the database is left as it was)."""
    from app.db import make_engine, make_sessionmaker, session_scope, upgrade

    settings = get_settings()
    upgrade(settings.database_url)
    factory = make_sessionmaker(make_engine(settings.database_url))
    try:
        for session in session_scope(factory):
            result = change(session, *args)
    except (ValueError, NotFound) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(ExitCode.BAD_INPUT) from exc
    return result


def create_user_command(
    email: Annotated[str, typer.Option(help="The user's email; it is their sign-in name.")],
    role: Annotated[Role, typer.Option(help="learner or instructor.")] = Role.learner,
    password: PasswordOption = "",
) -> None:
    """Create a user with a password (stored as an argon2id hash)."""
    from app.accounts import create_user

    user: User = _on_accounts(create_user, email, role, password)
    typer.echo(f"created {user.role.value} {user.email} (id {user.id})")


def set_password_command(
    email: Annotated[str, typer.Option(help="The account's email.")],
    password: PasswordOption = "",
) -> None:
    """Give an account a new password; every session of the account ends (all devices)."""
    from app.accounts import change_password

    user: User = _on_accounts(change_password, email, password)
    typer.echo(f"new password for {user.email}; its sessions have ended")


def remove_user_command(
    email: Annotated[str, typer.Option(help="The account's email.")],
    yes: Annotated[
        bool, typer.Option("--yes", help="Do not ask for confirmation.", prompt="Remove it?")
    ] = False,
) -> None:
    """Remove an account with its designs and progress; its sessions end."""
    if not yes:
        typer.echo("not removed", err=True)
        raise typer.Exit(ExitCode.BAD_INPUT)
    from app.accounts import remove_account

    user: User = _on_accounts(remove_account, email)
    typer.echo(f"removed {user.email} (id {user.id}); its sessions have ended")
