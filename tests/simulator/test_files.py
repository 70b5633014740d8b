"""simulator/files.py reads design, scenario, pricing, course and step files with YAML 1.2
semantics and refuses a key given twice (issue 16, cases 6 and 15): the file, line and key of
the second one are named, whichever file it is."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.course.loader import load_course
from simulator.design import Design
from simulator.errors import InputFileError
from simulator.files import load_design, load_model, parse_yaml
from simulator.scenario import Scenario
from tests.factories import write_course

REFERENCE = Path(__file__).resolve().parents[2] / "steps" / "designs" / "reference.yaml"


def problems(text: str, model: type = Design) -> list[tuple[int | None, str, str]]:
    with pytest.raises(InputFileError) as refused:
        load_model(model, text, "design.yaml")
    return [(e.line, e.field, e.message) for e in refused.value.errors]


def test_case6_a_second_partitions_key_is_refused_naming_file_line_and_key(tmp_path: Path):
    """`partitions: 24` under `partitions: 96` used to grade as 24."""
    path = tmp_path / "design.yaml"
    path.write_text("version: 1\nevent_log:\n  partitions: 96\n  partitions: 24\n")
    with pytest.raises(InputFileError) as refused:
        load_design(path)
    [error] = refused.value.errors
    assert (error.file, error.line, error.field) == (str(path), 4, "event_log.partitions")
    assert "duplicate key 'partitions': already given at line 3" in error.message
    assert str(error).startswith(f"{path}:4: event_log.partitions: duplicate key")


def test_case6_a_second_event_log_block_is_refused_not_reset_to_defaults():
    text = REFERENCE.read_text() + "event_log:\n  partitions: 12\n"
    first = 1 + REFERENCE.read_text().splitlines().index("event_log:")
    [(line, field, message)] = problems(text)
    assert field == "event_log"
    assert line == len(REFERENCE.read_text().splitlines()) + 1
    assert f"already given at line {first}" in message


@pytest.mark.parametrize(
    ("text", "line", "field"),
    [
        ("name: a\nevent_log: {partitions: 3, partitions: 4}\n", 2, "event_log.partitions"),
        ('{"name": "a", "name": "b"}\n', 1, "name"),
        ("name: a\n'name': b\n", 2, "name"),
    ],
    ids=["flow-mapping-one-line", "json-object", "quoted-and-plain"],
)
def test_case6_a_key_repeated_on_one_line_in_json_or_quoted_is_refused(text, line, field):
    [(got_line, got_field, message)] = problems(text)
    assert (got_line, got_field) == (line, field) and "duplicate key" in message


def test_case6_a_scenario_with_a_key_given_twice_is_refused():
    text = "version: 1\nname: a\nduration_seconds: 600\nduration_seconds: 60\n"
    [(line, field, message)] = problems(text, Scenario)
    assert (line, field) == (4, "duration_seconds") and "duplicate key" in message


def test_case6_a_step_file_with_a_key_given_twice_is_a_course_problem(tmp_path: Path):
    root = write_course(tmp_path / "course")
    step_file = next(root.glob("*/step.yaml"))
    step_file.write_text(step_file.read_text() + "title: Again\n")
    loaded = load_course(root)
    found = [p for p in loaded.problems if "duplicate key 'title'" in p.message]
    assert found and found[0].field == "title"
    assert found[0].line == len(step_file.read_text().splitlines())


def test_case6_an_anchor_and_alias_are_refused_naming_the_line():
    [(line, _, message)] = problems("name: &n a\nmodel:\n  name: *n\n")
    assert line == 3 and "aliases" in message


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("a: 010\n", 10),
        ("a: 1:30\n", "1:30"),
        ("a: yes\n", "yes"),
        ("a: no\n", "no"),
        ("a: on\n", "on"),
        ("a: off\n", "off"),
        ("a: 0o17\n", 15),
        ("a: 0x1f\n", 31),
        ("a: 1e3\n", 1000.0),
        ("a: 1_000\n", "1_000"),
        ("a: 2025-06-01\n", "2025-06-01"),
        ("a: TRUE\n", True),
        ("a: ~\n", None),
        ("a: -.inf\n", float("-inf")),
    ],
)
def test_case15_yaml_is_read_with_yaml_1_2_core_schema_semantics(text, value):
    data, _ = parse_yaml(text, "f.yaml")
    assert data == {"a": value} and type(data["a"]) is type(value)


def test_case15_an_int_field_written_1_30_is_refused_not_read_as_90():
    [(line, field, message)] = problems("event_log:\n  partitions: 1:30\n")
    assert (line, field) == (2, "event_log.partitions") and "valid integer" in message


def test_case15_a_leading_zero_is_decimal_so_010_partitions_are_ten():
    design = load_model(Design, "event_log:\n  partitions: 010\n", "design.yaml")
    assert design.event_log.partitions == 10


@pytest.mark.parametrize(
    "text", ["a: !!int 0b11\n", "a: !!float inf\n", "a: !!bool maybe\n", "a: !!binary aGk=\n",
             "a: !!timestamp 2025-06-01\n", "a: !!set {x}\n"],
)  # fmt: skip
def test_case15_an_explicit_tag_outside_the_core_schema_is_refused_with_its_line(text):
    with pytest.raises(InputFileError) as refused:
        parse_yaml(text, "f.yaml")
    [error] = refused.value.errors
    assert error.line == 1 and "YAML syntax" in error.message


def test_case9_a_fault_after_the_scenario_end_is_refused_with_its_line_and_field():
    text = (
        "version: 1\nname: late\nduration_seconds: 1000\nfaults:\n"
        "  - kind: rebalance\n    at_seconds: 10\n"
        "  - kind: worker_crash\n    at_seconds: 5000\n"
    )
    [(line, field, message)] = problems(text, Scenario)
    assert (line, field) == (8, "faults.1.at_seconds")
    assert message.startswith("the worker_crash fault starts at 5000 s, at or after the end")


def test_case6_a_course_file_and_a_pricing_catalog_with_a_key_given_twice_are_refused(
    tmp_path: Path,
):
    from simulator.pricing import load_pricing

    root = write_course(tmp_path / "course")
    course_file = root / "course.yaml"
    course_file.write_text(course_file.read_text() + "budget_usd: 1\n")
    loaded = load_course(root)
    assert any(
        p.file == str(course_file) and p.field == "budget_usd" and "duplicate key" in p.message
        for p in loaded.problems
    ), [str(p) for p in loaded.problems]
    pricing = root / "pricing.yaml"
    first_key = next(line for line in pricing.read_text().splitlines() if line[:1].isalpha())
    pricing.write_text(pricing.read_text() + first_key + "\n")
    with pytest.raises(InputFileError) as refused:
        load_pricing(pricing)
    assert "duplicate key" in refused.value.errors[0].message


def test_files_are_parsed_by_libyaml_when_pyyaml_has_it():
    """libyaml's parser is about ten times faster than PyYAML's own; yaml.CParser is not
    exported (it is yaml.cyaml.CParser), and looking for it there sent every file through the
    pure-Python parser."""
    import yaml

    from simulator.files import _LineLoader

    if not yaml.__with_libyaml__:
        pytest.skip("this PyYAML was built without libyaml")
    assert yaml.cyaml.CParser in _LineLoader.__mro__
    assert yaml.parser.Parser not in _LineLoader.__mro__
