"""Hostile design and scenario files are refused with a message, quickly, naming the field when
there is one: YAML bombs, deep nesting, huge files and numbers, unknown fields, wrong types and
units, tags that would construct objects, and bytes that are not UTF-8."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from simulator.design import Design
from simulator.errors import InputFileError
from simulator.files import MAX_DEPTH, MAX_FILE_BYTES, load_design, load_model
from simulator.scenario import Scenario


def refusal(text: str, model: type = Design) -> list[tuple[int | None, str, str]]:
    """(line, field, message) of every problem; fails the test if the file is accepted."""
    with pytest.raises(InputFileError) as refused:
        load_model(model, text, "design.yaml")
    return [(e.line, e.field, e.message) for e in refused.value.errors]


def billion_laughs(levels: int) -> str:
    lines = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(levels):
        name, previous = chr(98 + i), chr(97 + i)
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 10) + "]")
    return "\n".join(lines) + "\n"


def test_a_billion_laughs_is_refused_before_any_expansion():
    """Nine levels of ten aliases would be 10**10 nodes; the refusal must not walk them."""
    started = time.monotonic()
    [(line, field, message)] = refusal(billion_laughs(9))
    assert "aliases" in message and line == 2 and field == ""
    assert time.monotonic() - started < 1


@pytest.mark.parametrize("opener", ["[", "{a: "])
def test_thousands_of_nesting_levels_are_refused_without_exhausting_the_stack(opener):
    closer = "]" if opener == "[" else "}"
    text = "name: " + opener * 50_000 + "1" + closer * 50_000 + "\n"
    [(_, _, message)] = refusal(text)
    assert f"nesting deeper than {MAX_DEPTH} levels" in message


def test_nesting_just_over_the_limit_is_refused_by_indentation_too():
    text = "".join(" " * i + f"k{i}:\n" for i in range(MAX_DEPTH + 2)) + " " * 40 + "v: 1\n"
    [(_, _, message)] = refusal(text)
    assert "nesting deeper" in message


def test_a_file_over_the_size_limit_is_refused_unread(tmp_path: Path):
    path = tmp_path / "design.yaml"
    path.write_text("name: x\n" + "#" * MAX_FILE_BYTES)
    with pytest.raises(InputFileError) as refused:
        load_design(path)
    assert f"larger than {MAX_FILE_BYTES} bytes" in refused.value.errors[0].message


def test_a_huge_text_over_the_size_limit_is_refused():
    [(_, _, message)] = refusal("name: " + "x" * (MAX_FILE_BYTES + 1))
    assert "larger than" in message


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("event_log:\n  partitions: " + "9" * 5000 + "\n", "event_log.partitions"),
        ("event_log:\n  partitions: 99999999999999999999\n", "event_log.partitions"),
        ("event_log:\n  retention_hours: 1e999\n", "event_log.retention_hours"),
        ("event_log:\n  retention_hours: -.inf\n", "event_log.retention_hours"),
        ("event_log:\n  retention_hours: .nan\n", "event_log.retention_hours"),
        ("event_log:\n  partitions: -3\n", "event_log.partitions"),
    ],
    ids=["5000-digits", "20-digits", "1e999", "-inf", "nan", "negative"],
)
def test_huge_and_impossible_numbers_are_refused_naming_the_field(text, field):
    problems = refusal(text)
    assert [f for _, f, _ in problems] == [field]
    assert problems[0][0] == 2


@pytest.mark.parametrize(
    ("text", "field", "says"),
    [
        ("event_log:\n  partitionz: 3\n", "event_log.partitionz", "unknown field 'partitionz'"),
        ("colour: blue\n", "colour", "unknown field 'colour'"),
        ("event_log:\n  partitions: twelve\n", "event_log.partitions", "valid integer"),
        ("event_log:\n  partitions: [1, 2]\n", "event_log.partitions", "valid integer"),
        ("event_log: 12\n", "event_log", "dictionary"),
        ("event_log:\n  retention_hours: 7d\n", "event_log.retention_hours", "valid number"),
        ("event_log:\n  retention_hours: 168 hours\n", "event_log.retention_hours", "number"),
        ("delivery:\n  commit: sometimes\n", "delivery.commit", "Input should be"),
        ("version: 2\n", "version", "Input should be 1"),
    ],
    ids=["unknown-field", "unknown-section", "word", "list", "scalar-section", "unit-d",
         "unit-hours", "enum", "version"],
)  # fmt: skip
def test_unknown_fields_wrong_types_and_units_are_refused_naming_the_field(text, field, says):
    problems = refusal(text)
    assert field in [f for _, f, _ in problems]
    assert any(says in message for _, f, message in problems if f == field)


@pytest.mark.parametrize(
    "text",
    [
        "name: !!python/object/apply:os.system ['true']\n",
        "name: !!python/name:os.system\n",
        "name: !custom thing\n",
    ],
)
def test_tags_that_would_construct_objects_are_refused(text):
    [(line, _, message)] = refusal(text)
    assert line == 1 and "YAML syntax" in message


@pytest.mark.parametrize("text", ["", "# nothing\n", "- a list\n", "just a string\n", "42\n"])
def test_a_file_that_is_not_a_mapping_is_refused(text):
    [(_, _, message)] = refusal(text)
    assert "mapping" in message


def test_bytes_that_are_not_utf8_are_refused(tmp_path: Path):
    path = tmp_path / "design.yaml"
    path.write_bytes(b"name: \xff\xfe\n")
    with pytest.raises(InputFileError) as refused:
        load_design(path)
    assert "cannot read" in refused.value.errors[0].message


def test_scenario_bounds_refuse_a_horizon_longer_than_a_week():
    text = "version: 1\nname: long\nduration_seconds: 31536000\n"
    problems = refusal(text, Scenario)
    assert "duration_seconds" in [f for _, f, _ in problems]


def test_scenario_refuses_too_many_faults():
    faults = "".join(f"  - {{kind: rebalance, at_seconds: {i}}}\n" for i in range(65))
    problems = refusal(f"version: 1\nname: busy\nfaults:\n{faults}", Scenario)
    assert [f for _, f, _ in problems] == ["faults"]


@pytest.mark.parametrize(
    ("text", "last_line"),
    [("version: 1\nevent_log:\n  partitions: [3\n", 3), ('version: 1\nname: "abc\n', 2)],
)
def test_a_syntax_error_found_at_the_end_names_the_last_line_not_one_past_it(text, last_line):
    [(line, _, message)] = refusal(text)
    assert line == last_line and "YAML syntax" in message
