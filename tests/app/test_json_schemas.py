"""The exported JSON Schemas in schemas/ match the pydantic models."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from app.cli import main
from app.json_schemas import SCHEMAS, stale_schemas

SCHEMAS_DIR = Path(__file__).resolve().parents[2] / "schemas"


def test_committed_schemas_are_current():
    stale = stale_schemas(SCHEMAS_DIR)
    assert stale == [], "run `designlab schema --out schemas` and commit the result"


def test_design_schema_covers_every_section():
    schema = json.loads((SCHEMAS_DIR / "design.schema.json").read_text())
    sections = {
        "api",
        "data_model",
        "event_log",
        "delivery",
        "consumers",
        "model",
        "orchestration",
        "checkpoint",
        "state_store",
        "tools",
        "failures",
    }
    assert sections <= set(schema["properties"])
    assert schema["properties"]["version"]["const"] == 1


def test_schema_command_writes_then_check_passes(tmp_path):
    runner = CliRunner()
    assert runner.invoke(main, ["schema", "--out", str(tmp_path), "--check"]).exit_code == 1
    result = runner.invoke(main, ["schema", "--out", str(tmp_path)])
    assert result.exit_code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(SCHEMAS)
    assert runner.invoke(main, ["schema", "--out", str(tmp_path), "--check"]).exit_code == 0
