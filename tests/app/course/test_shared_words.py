"""The shared-words rule (``designlab lint --seeds DIR``): a run of 8 or more consecutive words a
course text shares with a source is a warning with file and line, outside quoted, attributed
definitions; 7 shared words are not."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.course.shared_words import (
    SHARED_RUN_WORDS,
    markdown_words,
    shared_with_seeds,
    yaml_strings,
)

SOURCE = (
    "Kafka guarantees order only within a partition, so choose the key with care. "
    "Consumers commit offsets after the work is done, never before it."
)
NINE_SHARED = "so choose the key with care. Consumers commit offsets"
SEVEN_SHARED = "so choose the key with care. Consumers"


@pytest.fixture
def seeds(tmp_path: Path) -> Path:
    folder = tmp_path / "seeds"
    folder.mkdir()
    (folder / "chapter.txt").write_text(SOURCE)
    (folder / "notes.md").write_text(SOURCE.replace("order", "ORDERING"))  # not a *.txt: unread
    return folder


@pytest.fixture
def course(tmp_path: Path) -> Path:
    folder = tmp_path / "steps"
    (folder / "01-a").mkdir(parents=True)
    return folder


def found(course: Path, seeds: Path) -> list[tuple[str, int, int]]:
    return [
        (str(r.file.relative_to(course)), r.line, len(r.words))
        for r in shared_with_seeds(course, seeds)
    ]


def test_eight_words_is_the_reported_run():
    assert SHARED_RUN_WORDS == 8


def test_a_copied_run_of_nine_words_is_reported_at_its_line_whatever_case_and_punctuation(
    course, seeds
):
    (course / "01-a" / "narrative.md").write_text(
        f"# Keys\n\nIntro line.\nWe say: {NINE_SHARED.upper().replace('.', ' --')} and more.\n"
    )
    (run,) = shared_with_seeds(course, seeds)
    assert (run.line, len(run.words), run.source) == (4, 9, "chapter.txt")
    problem = str(run.problem())
    assert problem.startswith(f"{course / '01-a' / 'narrative.md'}:4: warning: 9 words shared")
    assert "\u201cso choose the key with care consumers commit offsets\u201d" in problem


def test_seven_shared_words_are_the_course_s_own(course, seeds):
    (course / "01-a" / "narrative.md").write_text(f"Here: {SEVEN_SHARED} differently.\n")
    assert found(course, seeds) == []


def test_overlapping_matches_make_one_run_and_separate_ones_two(course, seeds):
    (course / "01-a" / "narrative.md").write_text(f"{SOURCE}\n\nOwn words here.\n\n{NINE_SHARED}\n")
    assert found(course, seeds) == [("01-a/narrative.md", 1, 24), ("01-a/narrative.md", 5, 9)]


def test_a_quote_that_ends_with_its_source_is_exempt_and_one_without_is_not(course, seeds):
    (course / "01-a" / "narrative.md").write_text(
        f"> {NINE_SHARED}\n> — The chapter on keys\n\nBetween.\n\n> {NINE_SHARED}\n> no source\n"
    )
    assert found(course, seeds) == [("01-a/narrative.md", 6, 9)]


def test_yaml_strings_are_compared_at_their_own_line_and_keys_are_not(course, seeds):
    (course / "course.yaml").write_text(
        "title: Own\n"
        "problem: >-\n"
        "  Something first,\n"
        f"  {NINE_SHARED}\n"
        "items:\n"
        f'  - {{label: "{NINE_SHARED}"}}\n'
    )
    assert found(course, seeds) == [("course.yaml", 4, 9), ("course.yaml", 6, 9)]


def test_a_template_tag_breaks_a_run(course, seeds):
    words = NINE_SHARED.split()
    broken = " ".join(words[:4]) + " {{ fmt(metrics.lost) }} " + " ".join(words[4:])
    (course / "01-a" / "step.yaml").write_text(f"explain: >-\n  {broken}\n")
    assert found(course, seeds) == []


def test_a_figure_placeholder_breaks_a_run_in_markdown():
    tokens = markdown_words("a b {{ figures.x }} c\n")
    assert [t.text if t else None for t in tokens] == ["a", "b", None, "c"]


def test_yaml_strings_yield_values_with_their_first_line_and_never_keys():
    text = "a: one\nb:\n  - two\n  - c: >-\n      three\n      four\n"
    assert [(s.split(), line) for s, line in yaml_strings(text)] == [
        (["one"], 1),
        (["two"], 3),
        ([">-", "three", "four"], 4),
    ]


def test_a_folder_without_sources_is_refused_not_read_as_clean(course, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match="no \\*.txt source file"):
        shared_with_seeds(course, empty)
    with pytest.raises(NotADirectoryError):
        shared_with_seeds(course, tmp_path / "missing")
