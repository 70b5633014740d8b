"""The ``designlab`` command line. Each command lives in app/commands/<name>.py; register it below.

Exit codes (app.commands.ExitCode): 0 ok, 1 findings, 2 bad input or usage (the message names the
file, line and field), 3 internal error. Commands raise InputFileError or a DesignlabError for bad
input and let anything else escape: the group below turns both into the right exit code.

Every command module is imported here, so each loads at the top only what its options need:
the web stack and the database load inside the commands that use them (serve, migrate, the
account commands, export, worker), never for grade, simulate or lint; the simulator's engine
(numpy, SimPy) loads only in the commands that simulate (tests/app/test_cli_imports.py).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from typing import Any, NoReturn

import typer
from pydantic import ValidationError
from typer.core import TyperGroup

from app.commands import ExitCode
from app.commands.database import (
    create_user_command,
    migrate,
    remove_user_command,
    set_password_command,
)
from app.commands.export import export_command
from app.commands.grade import grade_command
from app.commands.lint import lint
from app.commands.schema import schema
from app.commands.serve import serve
from app.commands.simulate import simulate_command
from app.commands.worker import worker_command
from app.errors import DesignlabError, Unavailable
from simulator import SIMULATOR_VERSION
from simulator.errors import InputFileError


class _Group(TyperGroup):
    """Maps exceptions that escape a command to designlab's exit codes."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except InputFileError as exc:
            for error in exc.errors:
                typer.echo(f"error: {error}", err=True)
            raise typer.Exit(ExitCode.BAD_INPUT) from exc
        except ValidationError as exc:  # the settings (environment or .env) are not valid
            for detail in exc.errors():
                where = ".".join(str(part).upper() for part in detail["loc"]) or "settings"
                typer.echo(f"error: {where}: {detail['msg']}", err=True)
            raise typer.Exit(ExitCode.BAD_INPUT) from exc
        except Unavailable as exc:  # the machine, not the input: never exit 2
            typer.echo(f"error: {exc.detail}", err=True)
            raise typer.Exit(ExitCode.INTERNAL) from exc
        except DesignlabError as exc:
            for error in exc.fields:
                typer.echo(f"error: {error}", err=True)
            typer.echo(f"error: {exc.detail}", err=True)
            raise typer.Exit(ExitCode.BAD_INPUT) from exc
        except BrokenPipeError as exc:
            # The reader closed the pipe (``designlab grade ... | head``): not an internal error.
            # Point stdout at /dev/null so the flush at exit cannot fail again (Python's
            # documented idiom, "Note on SIGPIPE" in the signal module's docs).
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            # 141 = 128 + SIGPIPE, what a shell reports for a writer the pipe's reader ended.
            raise typer.Exit(128 + signal.SIGPIPE) from exc
        except Exception as exc:
            if hasattr(exc, "exit_code"):  # typer.Exit, usage errors: they carry their own code
                raise
            typer.echo(f"internal error: {type(exc).__name__}: {exc}", err=True)
            raise typer.Exit(ExitCode.INTERNAL) from exc


main = typer.Typer(
    cls=_Group,
    name="designlab",
    help="designlab: design a durable multi-agent workflow, simulate it, grade it.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import version as package_version  # tens of ms: only here

        typer.echo(f"designlab {package_version('designlab')} (simulator {SIMULATOR_VERSION})")
        raise typer.Exit()


@main.callback()
def _options(
    version: bool = typer.Option(
        False,
        "--version",
        callback=_print_version,
        is_eager=True,
        help="Print the designlab and simulator versions and exit.",
    ),
) -> None:
    """designlab: design a durable multi-agent workflow, simulate it, grade it."""


main.command()(serve)
main.command()(migrate)
main.command("create-user")(create_user_command)
main.command("set-password")(set_password_command)
main.command("remove-user")(remove_user_command)
main.command()(lint)
main.command()(schema)
main.command("grade")(grade_command)
main.command("export")(export_command)
main.command("simulate")(simulate_command)
main.command("worker")(worker_command)

EXIT_WITHOUT_TEARDOWN = frozenset({"grade", "lint", "simulate"})
"""The commands whose process ends without the interpreter's teardown (:func:`run`): they open no
database, server, pool or thread, and write their files inside ``with`` blocks."""


def run() -> NoReturn:
    """The ``designlab`` console script: :data:`main` with the process's ``sys.argv``.

    After one of :data:`EXIT_WITHOUT_TEARDOWN`, the process flushes its standard streams and
    ends with ``os._exit`` instead of returning to the interpreter, which would free every
    module, model and array one by one and run a last garbage collection first (about 0.2 s of
    a ``designlab grade`` of 2.5 s on one core; mypy ends its runs the same way, for the same
    reason). Its exit code is the command's. A reader that closed the pipe before that flush
    gives 141, as the commands do (128 + SIGPIPE). Every other command exits as usual.
    """
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    try:
        main()
    except SystemExit as exc:
        code = exc.code
        if command not in EXIT_WITHOUT_TEARDOWN or not isinstance(code, int | None):
            raise
    else:  # typer's standalone mode always ends with SystemExit; kept for a future one
        code = 0
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        code = 128 + signal.SIGPIPE
    with contextlib.suppress(OSError):  # nowhere left to say anything
        sys.stderr.flush()
    os._exit(code or 0)


if __name__ == "__main__":
    run()
