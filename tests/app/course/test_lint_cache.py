"""The lint rules' findings kept on disk for the next command-line grade (app.course.lint_cache):
read back only for the same files and code, equal to a fresh run, never kept from a run in which
a rule raised, and never in the way when the cache cannot be read or written. Each test works on
a copy of the real course with a lint error in it, so the findings are not empty."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import app.course.lint_cache as lint_cache
from app.course.content import LoadedCourse, Problem
from app.course.lint import checked_rules
from app.course.loader import load_course

REPO_STEPS = Path(__file__).resolve().parents[3] / "steps"
STEP4 = Path("04-exactly-once-effects") / "step.yaml"
BROKEN = ("{% set f = scenario.faults[1] %}", "{% set f = scenario.faults[7] %}")


@pytest.fixture
def course(tmp_path: Path) -> Path:
    """A copy of the course whose step 4 reads a fault its scenario does not have."""
    root = tmp_path / "steps"
    shutil.copytree(REPO_STEPS, root)
    step = root / STEP4
    text = step.read_text()
    assert text.count(BROKEN[0]) == 1
    step.write_text(text.replace(*BROKEN))
    return root


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    folder.mkdir()
    monkeypatch.setattr(lint_cache, "cache_directory", lambda: folder)
    return folder


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the lint rules' runs through the cache."""
    counted: list[int] = []

    def counting(course: LoadedCourse) -> tuple[list[Problem], bool]:
        counted.append(1)
        return checked_rules(course)

    monkeypatch.setattr(lint_cache, "checked_rules", counting)
    return counted


def test_a_second_load_reads_the_findings_and_they_equal_a_fresh_run(course, cache_dir, runs):
    fresh = load_course(course)
    assert any("scenario.faults[7]" in p.message for p in fresh.errors)
    first = load_course(course, lint_cache=True)
    second = load_course(course, lint_cache=True)
    assert len(runs) == 1
    assert len(list(cache_dir.glob("designlab-lint-*.json"))) == 1
    assert first.problems == second.problems == fresh.problems
    assert [s.problems for s in second.steps] == [s.problems for s in fresh.steps]


def test_a_changed_course_file_runs_the_rules_again(course, cache_dir, runs):
    load_course(course, lint_cache=True)
    step = course / STEP4
    step.write_text(step.read_text().replace(BROKEN[1], BROKEN[0]))
    fixed = load_course(course, lint_cache=True)
    assert len(runs) == 2
    assert not any("scenario.faults[7]" in p.message for p in fixed.errors)
    assert fixed.problems == load_course(course).problems


def test_a_new_file_and_the_folder_as_named_are_in_the_key(course):
    key = lint_cache.lint_key(course)
    (course / "notes.md").write_text("an instructor's notes\n")
    assert lint_cache.lint_key(course) != key
    assert lint_cache.lint_key(course / ".." / "steps") != lint_cache.lint_key(course)


def test_a_run_in_which_a_rule_raised_is_not_kept(course, cache_dir, monkeypatch):
    def raising(_course: LoadedCourse) -> list[Problem]:
        raise MemoryError("out of memory")

    monkeypatch.setattr(lint_cache, "checked_rules", lambda c: checked_rules(c, [raising]))
    loaded = load_course(course, lint_cache=True)
    assert [p.message for p in loaded.errors][-1] == (
        "lint rule raising failed: MemoryError: out of memory"
    )
    assert list(cache_dir.iterdir()) == []


def test_a_damaged_cache_file_is_run_again_and_rewritten(course, cache_dir, runs):
    load_course(course, lint_cache=True)
    [stored] = cache_dir.glob("designlab-lint-*.json")
    stored.write_text('[{"severity": "error"')
    again = load_course(course, lint_cache=True)
    assert len(runs) == 2
    assert again.problems == load_course(course).problems
    assert load_course(course, lint_cache=True).problems == again.problems
    assert len(runs) == 2


def test_no_cache_directory_or_an_unwritable_one_costs_only_the_run(
    course, tmp_path, monkeypatch, runs
):
    monkeypatch.setattr(lint_cache, "cache_directory", lambda: None)
    assert load_course(course, lint_cache=True).problems == load_course(course).problems
    monkeypatch.setattr(lint_cache, "cache_directory", lambda: tmp_path / "missing")
    assert load_course(course, lint_cache=True).problems == load_course(course).problems
    assert len(runs) == 2
    assert not (tmp_path / "missing").exists()
