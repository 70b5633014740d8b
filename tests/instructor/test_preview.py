"""Step preview designs: the course's own designs only, with the checks each must fail per step."""

from __future__ import annotations

import pytest

from app.errors import NotFound
from app.instructor.preview import find_design, preview_designs


def test_the_designs_are_the_reference_then_the_known_bad_in_course_order(second_course):
    designs = preview_designs(second_course)
    assert [d.label for d in designs] == [
        "reference",
        "few-partitions",
        "commit-first",
        "no-dedupe",
        "endless-retry",
    ]
    assert designs[0].is_reference and not designs[1].is_reference


def test_expected_failures_are_the_steps_own_checks_by_bare_or_qualified_id(second_course):
    few = find_design(second_course, "designs/bad/few-partitions.yaml")
    step1, step2, _ = second_course.steps
    assert few.expected_in(step1) == ["partitions-cover-in-flight", "peak-keeps-up"]
    assert few.expected_in(step2) == []
    qualified = type(few)(few.file, frozenset({"size-the-group/key-per-order"}))
    assert qualified.expected_in(step1) == ["key-per-order"]
    assert qualified.expected_in(step2) == []


def test_no_design_means_the_reference_and_an_unknown_file_is_not_found(second_course):
    assert find_design(second_course, None).file == "designs/reference.yaml"
    with pytest.raises(NotFound):
        find_design(second_course, "designs/other.yaml")
