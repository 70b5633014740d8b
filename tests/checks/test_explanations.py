"""Explanation templates: the formula with the learner's numbers, rendered in a narrow sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.checks import explanations
from app.checks.explanations import ExplanationError, explanation_problems, render_explanation
from simulator.design import Design


def test_the_formula_is_filled_with_the_design_numbers():
    """capacity = partitions / step time, with the design's partitions and fmt'd figures."""
    design = Design.model_validate({"event_log": {"partitions": 40}})
    text = render_explanation(
        "capacity = {{ design.event_log.partitions }} partitions / {{ fmt(2.0) }} s = "
        "{{ fmt(design.event_log.partitions / 2.0, 0) }} events/s",
        {"design": design},
    )
    assert text == "capacity = 40 partitions / 2.0 s = 20 events/s"


def test_whitespace_of_folded_yaml_is_collapsed():
    """Line breaks and indentation from a YAML block collapse to single spaces."""
    text = render_explanation("a\n   {% if true %}b{% endif %}\n  c", {})
    assert text == "a b c"


def test_undefined_names_fail_loudly():
    """A misspelt name is an error, not blank text."""
    with pytest.raises(ExplanationError, match="'desgin' is undefined"):
        render_explanation("{{ desgin.name }}", {"design": Design()})


def test_methods_and_private_attributes_are_refused():
    """The sandbox reaches fields only: model_dump and __class__ are unsafe."""
    for template in ("{{ design.model_dump() }}", "{{ design.__class__ }}"):
        with pytest.raises(ExplanationError, match="unsafe"):
            render_explanation(template, {"design": Design()})


def test_problems_name_the_template_line():
    """An unknown field on line 2 of a template is reported with that line."""
    problems = explanation_problems("first line\n{{ design.event_log.partitons }}")
    assert problems == [
        "template line 2: EventLogSection has no field 'partitons'; "
        "did you mean partitions, partition_key?"
    ]


def test_unknown_names_and_filters_are_problems():
    """Names outside the documented list and filters Jinja does not have."""
    assert explanation_problems("{{ learner }}")[0].startswith("unknown name 'learner'")
    assert "No filter named 'money'" in explanation_problems("{{ 3 | money }}")[0]


def test_loop_variables_are_not_unknown():
    """A name bound by the template itself ({% for %}) is not reported."""
    template = "{% for g in [design.consumers.agent] %}{{ g.instances }}{% endfor %}"
    assert explanation_problems(template) == []


def _rendered_by_jinja(template: str) -> str:
    """What render_explanation gives when it compiles the template (the explanations' own
    sandboxed environment, whitespace collapsed as render_explanation collapses it)."""
    from app.checks.explanations import _ENV, _SPACES

    return _SPACES.sub(" ", _ENV.from_string(template).render()).strip()


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_characters="{\r"), max_size=80))
def test_plain_text_renders_as_jinja_renders_it(template: str):
    """A message with no Jinja syntax is not compiled (most are such), and reads the same."""
    assert render_explanation(template, {}) == _rendered_by_jinja(template)


def test_every_plain_message_of_the_course_renders_as_jinja_renders_it():
    from pathlib import Path

    from app.course.loader import load_course

    course = load_course(Path(__file__).resolve().parents[2] / "steps")
    plain = [
        text
        for step in course.steps
        if step.step is not None
        for check in step.step.checks
        for text in (check.explain, check.pass_message, check.fail_message, check.hint)
        if "{" not in text
    ]
    assert len(plain) > 20  # the hints: every message of the course is computed from the run
    assert [render_explanation(t, {}) for t in plain] == [_rendered_by_jinja(t) for t in plain]


def test_text_with_jinja_syntax_is_still_compiled():
    """A comment or a stray brace pair still goes through Jinja (the shortcut does not see it)."""
    assert render_explanation("a {# note #} b", {}) == "a b"
    with pytest.raises(ExplanationError):
        render_explanation("a {{ b", {})


def _fresh_compile(monkeypatch: pytest.MonkeyPatch, cache_dir: Path) -> None:
    """Forget every compiled template in this process and point the bytecode cache at
    ``cache_dir``."""
    monkeypatch.setattr(
        explanations._ENV,
        "bytecode_cache",
        explanations._QuietBytecodeCache(str(cache_dir), "designlab-explanation-%s.cache"),
    )
    explanations._compiled.cache_clear()
    explanations._ENV.cache.clear()  # type: ignore[union-attr]


def test_a_compiled_explanation_is_read_back_from_the_bytecode_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    template = "{{ fmt(x) }} step events/s over {{ n }} partitions"
    _fresh_compile(monkeypatch, tmp_path)
    assert render_explanation(template, {"x": 1234.5, "n": 48}) == (
        "1,234.5 step events/s over 48 partitions"
    )
    assert len(list(tmp_path.glob("designlab-explanation-*.cache"))) == 1
    # A fresh process, as far as Jinja knows: nothing compiled in memory, and compiling refused.
    explanations._compiled.cache_clear()
    explanations._ENV.cache.clear()  # type: ignore[union-attr]

    def no_compile(*args: object, **kwargs: object) -> None:
        raise AssertionError("compiled again instead of read from the cache")

    monkeypatch.setattr(explanations._ENV, "compile", no_compile)
    assert render_explanation(template, {"x": 2.0, "n": 3}) == "2.0 step events/s over 3 partitions"


def test_a_damaged_or_unwritable_bytecode_cache_only_costs_the_compiling(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    template = "{{ n }} partitions"
    _fresh_compile(monkeypatch, tmp_path)
    assert render_explanation(template, {"n": 4}) == "4 partitions"
    for cached in tmp_path.glob("designlab-explanation-*.cache"):
        cached.write_bytes(b"not a cache file")
    _fresh_compile(monkeypatch, tmp_path)
    assert render_explanation(template, {"n": 5}) == "5 partitions"
    _fresh_compile(monkeypatch, tmp_path / "missing")
    assert render_explanation(template, {"n": 6}) == "6 partitions"
    # A syntax error is still the template's, named as before.
    with pytest.raises(ExplanationError, match="does not parse"):
        render_explanation("{{ n ", {"n": 1})
