"""JSON Schemas of the YAML contracts (design, scenario), exported to schemas/ for editors, CI."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from simulator.design import Design
from simulator.scenario import Scenario

SCHEMAS: dict[str, type[BaseModel]] = {
    "design.schema.json": Design,
    "scenario.schema.json": Scenario,
}
"""File name -> the pydantic model it describes."""

DIALECT = "https://json-schema.org/draft/2020-12/schema"


def schema_text(model: type[BaseModel]) -> str:
    """The model's JSON Schema (draft 2020-12, validation mode) as stable, indented JSON."""
    schema = {"$schema": DIALECT, **model.model_json_schema(mode="validation")}
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def write_schemas(out: Path) -> list[Path]:
    """Write every schema into folder ``out`` (created if missing); return the files written."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, model in SCHEMAS.items():
        path = out / name
        path.write_text(schema_text(model), encoding="utf-8")
        written.append(path)
    return written


def stale_schemas(out: Path) -> list[Path]:
    """The schema files in ``out`` that are missing or differ from the models."""
    return [
        out / name
        for name, model in SCHEMAS.items()
        if not (out / name).is_file()
        or (out / name).read_text(encoding="utf-8") != schema_text(model)
    ]
