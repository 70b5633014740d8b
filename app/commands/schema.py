"""``designlab schema``: export the design and scenario JSON Schemas (or check they are current)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from app.commands import ExitCode
from app.json_schemas import stale_schemas, write_schemas


def schema(
    out: Annotated[Path, typer.Option(help="Folder to write the schemas into.")] = Path("schemas"),
    check: Annotated[
        bool, typer.Option("--check", help="Write nothing; exit 1 when a file is stale.")
    ] = False,
) -> None:
    """Write schemas/design.schema.json and schemas/scenario.schema.json from the models."""
    if check:
        stale = stale_schemas(out)
        for path in stale:
            typer.echo(f"{path}: stale; run `designlab schema --out {out}`")
        if stale:
            raise typer.Exit(ExitCode.FINDINGS)
        typer.echo(f"{out}: schemas are current")
        return
    for path in write_schemas(out):
        typer.echo(f"wrote {path}")
