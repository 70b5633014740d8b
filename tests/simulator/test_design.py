"""The design's event-log settings that Kafka itself refuses are refused when the design is
loaded, each error naming the file, the line and the field."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from simulator.design import Acks, Design
from simulator.errors import InputFileError
from simulator.files import load_design

REFERENCE = Path(__file__).resolve().parents[2] / "steps" / "designs" / "reference.yaml"


def _loaded_with(tmp_path: Path, old: str, new: str) -> InputFileError:
    text = REFERENCE.read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "design.yaml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(InputFileError) as caught:
        load_design(path)
    return caught.value


def _line(field: str) -> int:
    lines = REFERENCE.read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if line.strip().startswith(f"{field}:"))


@pytest.mark.parametrize("acks", ["'1'", "'0'"])
def test_idempotence_with_acks_other_than_all_is_refused_at_the_field(tmp_path, acks):
    [error] = _loaded_with(tmp_path, "acks: all", f"acks: {acks}").errors
    assert error.field == "event_log.enable_idempotence"
    assert error.line == _line("enable_idempotence")
    assert "Must set acks to all in order to use the idempotent producer" in error.message
    assert error.message.startswith("the idempotent producer needs acks all")


def test_acks_one_without_idempotence_loads():
    data = Design.model_validate_json(Design().model_dump_json())
    data.event_log.acks = Acks.leader
    assert data.event_log.enable_idempotence is False


def test_min_insync_replicas_above_the_replication_factor_is_refused_at_the_field(tmp_path):
    [error] = _loaded_with(tmp_path, "min_insync_replicas: 2", "min_insync_replicas: 4").errors
    assert (error.field, error.line) == (
        "event_log.min_insync_replicas",
        _line("min_insync_replicas"),
    )
    assert "exceeds replication_factor 3" in error.message


def test_a_replication_factor_above_the_brokers_is_refused_at_the_field(tmp_path):
    [error] = _loaded_with(tmp_path, "brokers: 3", "brokers: 2").errors
    assert error.field == "event_log.replication_factor"
    assert error.line == _line("replication_factor")
    assert "exceeds the 2 brokers" in error.message


def test_every_conflict_is_reported_at_once():
    with pytest.raises(ValidationError) as caught:
        Design.model_validate(
            {
                "event_log": {
                    "brokers": 1,
                    "replication_factor": 2,
                    "min_insync_replicas": 3,
                    "acks": "1",
                    "enable_idempotence": True,
                }
            }
        )
    assert [e["loc"] for e in caught.value.errors()] == [
        ("event_log", "replication_factor"),
        ("event_log", "min_insync_replicas"),
        ("event_log", "enable_idempotence"),
    ]


def test_an_assignment_that_breaks_idempotence_is_refused():
    design = Design.model_validate({"event_log": {"acks": "all", "enable_idempotence": True}})
    with pytest.raises(ValidationError) as caught:
        design.event_log.acks = Acks.leader
    assert caught.value.errors()[0]["loc"] == ("enable_idempotence",)
