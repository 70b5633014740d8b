"""Property tests of the design and scenario parsers (simulator/files.py): whatever the text, the
only exception is InputFileError; every problem says where it is (a line or a field); and a
hostile value put into a valid file is refused naming that field (or its section, for a rule
between fields)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simulator.design import Design
from simulator.errors import InputFileError
from simulator.files import load_model
from simulator.scenario import Scenario

STEPS = Path(__file__).resolve().parents[2] / "steps"
REFERENCE = yaml.safe_load((STEPS / "designs" / "reference.yaml").read_text())
PEAK = yaml.safe_load((STEPS / "scenarios" / "peak.yaml").read_text())
MODELS = st.sampled_from([Design, Scenario])
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

YAML_ALPHABET = st.sampled_from(
    list(":-[]{}&*!|>#'\"?%@`,.~= \n\t") + list("0123456789") + list("abcxyz_eE+")
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=20,
)
HOSTILE = st.one_of(
    st.integers(min_value=-(10**40), max_value=-1),
    st.integers(min_value=10**9, max_value=10**40),
    st.sampled_from([float("inf"), float("-inf"), float("nan"), -0.5, 1e300]),
    st.sampled_from(["10ms", "7d", "168 hours", "1e3 per s", "", "all", "null", "<script>"]),
    st.lists(st.integers(), min_size=1, max_size=3),
    st.dictionaries(st.sampled_from(["a", "value", "unit"]), st.integers(), min_size=1),
    st.text(max_size=30),
)


def problems_of(model: type, text: str) -> list[Any] | None:
    """None when ``text`` is a valid ``model``; else its problems. Any other exception fails."""
    try:
        load_model(model, text, "input.yaml")
    except InputFileError as exc:
        assert exc.errors, "an InputFileError must list its problems"
        return list(exc.errors)
    return None


def leaf_paths(data: Any, path: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """Every path to a scalar or a list inside ``data``."""
    if isinstance(data, dict) and data:
        return [p for key, value in data.items() for p in leaf_paths(value, path + (key,))]
    return [path]


def replaced(data: Any, path: tuple[str | int, ...], value: Any) -> Any:
    if not path:
        return value
    copy = dict(data)
    copy[path[0]] = replaced(data[path[0]], path[1:], value)
    return copy


@FUZZ
@given(model=MODELS, text=st.text(max_size=300))
def test_any_text_gives_a_model_or_an_input_file_error(model, text):
    problems_of(model, text)


@FUZZ
@given(model=MODELS, text=st.text(YAML_ALPHABET, max_size=300))
def test_yaml_punctuation_soup_gives_a_model_or_an_input_file_error(model, text):
    for problem in problems_of(model, text) or []:
        assert problem.line is not None or problem.field or problem.message


@FUZZ
@given(model=MODELS, data=st.dictionaries(st.text(max_size=12), VALUES, max_size=6))
def test_every_problem_of_a_parsed_mapping_names_a_field_or_a_line(model, data):
    text = yaml.safe_dump(data, allow_unicode=True)
    for problem in problems_of(model, text) or []:
        assert problem.field or problem.line is not None, problem


def assert_names_the_change(model: type, base: dict, path: tuple, value: Any) -> None:
    text = yaml.safe_dump(replaced(base, path, value), allow_unicode=True)
    problems = problems_of(model, text)
    if problems is None:
        return
    changed = ".".join(str(p) for p in path)
    named = [p.field for p in problems]
    assert all(named), f"{changed}={value!r}: a problem without a field: {problems}"
    assert any(changed.startswith(f) or f.startswith(changed) for f in named), (
        f"{changed}={value!r} refused, but the problems name {named}"
    )


@FUZZ
@given(data=st.data(), value=HOSTILE)
def test_a_hostile_value_in_the_reference_design_is_refused_naming_its_field(data, value):
    path = data.draw(st.sampled_from(leaf_paths(REFERENCE)))
    assert_names_the_change(Design, REFERENCE, path, value)


@FUZZ
@given(data=st.data(), value=HOSTILE)
def test_a_hostile_value_in_a_course_scenario_is_refused_naming_its_field(data, value):
    path = data.draw(st.sampled_from(leaf_paths(PEAK)))
    assert_names_the_change(Scenario, PEAK, path, value)


REFERENCE_FILE = Path(__file__).resolve().parents[2] / "steps" / "designs" / "reference.yaml"


def test_a_saved_design_writes_whole_numbers_without_a_decimal_point_and_loads_back_equal():
    from simulator.files import dump_yaml, load_design

    design = load_design(REFERENCE_FILE)
    text = dump_yaml(design)
    assert "session_timeout_ms: 45000\n" in text
    assert ".0\n" not in text
    assert load_model(Design, text, "design.yaml") == design
