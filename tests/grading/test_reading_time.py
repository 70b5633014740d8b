"""The course's time figure (``designlab lint --stats``): words read at 230 words/min, 20 s per
decision and the runs, per step and in total, from a fixture course whose words are counted by
hand below (tests/grading/fixtures/timed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.grading.grader import load_material
from app.grading.reading_time import (
    AIM_MINUTES,
    count_words,
    course_time,
    markdown_text,
    stats_table,
)
from simulator import simulate
from simulator.design import Design
from simulator.scenario import Scenario

FIXTURE = Path(__file__).parent / "fixtures" / "timed"

# Overview: "Timed fixture" 2, "Count what a learner reads." 5, "Read, decide, run." 3,
# "A timed course" 3, step titles "Count the words" 3 + "Run it" 2, summaries "Words." 1 and
# "A run." 2.
OVERVIEW_WORDS = 2 + 5 + 3 + 3 + 3 + 2 + 1 + 2
# Step 1: title 3; "Heading two words" 3; "Five words in this paragraph." 5; "Bold counts once,
# code too -> and arrows none." 8 (the arrow is no word); "Partitions: 32." 2 (the reference
# design's figure); the table's cells a b 1 2: 4.
STEP1_NARRATIVE = 3 + 3 + 5 + 8 + 2 + 4
# Labels "Partitions" 1 + "Start status" 2, help "How many the log has." 5, unit 1,
# choices "202 Accepted" 2 + "200 OK" 2.
STEP1_DECISIONS = 1 + 2 + 5 + 1 + 2 + 2
# The starting design (32 partitions) passes enough-partitions: title 2 + message 3, its figures
# and hint folded away; fails huge-log: title 3 + "Too few partitions." 3 + "32 of 100000
# wanted." 4 + "Add partitions now." 3.
STEP1_FEEDBACK = 2 + 3 + 3 + 3 + 4 + 3
# Step 2: title "Run it" 2 + "Run the tiny scenario." 4; feedback: title 2 + "N events arrived." 3.
STEP2_NARRATIVE = 2 + 4
STEP2_FEEDBACK = 2 + 3


@pytest.fixture(scope="module")
def material():
    return load_material(FIXTURE)


@pytest.fixture(scope="module")
def figure(material):
    return course_time(material, run_seconds=12)


def test_a_word_holds_a_letter_or_digit_so_arrows_and_rules_are_not_words():
    assert count_words("85,000 max.poll.records -> | --- | 20 % it's") == 4


def test_markdown_is_counted_as_the_text_the_reader_sees_without_markup():
    text = markdown_text("## A *b*\n\n[link](https://example.org/x/y) `c`\n\n```\nd e\n```\n")
    assert text.split() == ["A", "b", "link", "c", "d", "e"]


def test_each_step_counts_its_narrative_its_decisions_and_the_starting_designs_feedback(figure):
    overview, words, run = figure.rows
    assert (overview.number, overview.words, overview.decisions) == (0, OVERVIEW_WORDS, 0)
    assert (words.narrative_words, words.decision_words, words.feedback_words) == (
        STEP1_NARRATIVE,
        STEP1_DECISIONS,
        STEP1_FEEDBACK,
    )
    assert (run.narrative_words, run.decision_words, run.feedback_words) == (
        STEP2_NARRATIVE,
        0,
        STEP2_FEEDBACK,
    )


def test_reading_is_230_words_a_minute_and_each_decision_20_s(figure):
    words = figure.rows[1]
    assert words.decisions == 2 and words.deciding_seconds == 40
    assert words.reading_seconds == pytest.approx(
        (STEP1_NARRATIVE + STEP1_DECISIONS + STEP1_FEEDBACK) * 60 / 230
    )


def test_a_fixed_run_figure_counts_once_per_scenario_a_step_simulates(figure):
    assert [(r.runs, r.run_seconds) for r in figure.rows] == [(0, 0.0), (0, 0.0), (1, 12.0)]


def test_the_total_is_reading_plus_deciding_plus_running(figure):
    words = OVERVIEW_WORDS + STEP1_NARRATIVE + STEP1_DECISIONS + STEP1_FEEDBACK
    words += STEP2_NARRATIVE + STEP2_FEEDBACK
    assert figure.words == words == 88
    assert figure.total_seconds == pytest.approx(words * 60 / 230 + 2 * 20 + 12)
    assert figure.total_minutes == pytest.approx((words * 60 / 230 + 52) / 60)


def test_measured_runs_are_the_wall_time_of_each_scenario_simulation(material):
    ticks = iter([100.0, 102.5])
    calls: list[str] = []

    def counted(design: Design, scenario: Scenario, seed: int):
        calls.append(scenario.name)
        return simulate(design, scenario, seed)

    figure = course_time(material, simulate=counted, clock=lambda: next(ticks))
    assert calls == ["tiny"]
    assert figure.rows[2].run_seconds == 2.5 and figure.run_seconds == 2.5


def test_the_table_prints_a_row_per_step_and_the_total_against_the_aim(figure):
    lines = stats_table(figure)
    step1 = next(line for line in lines if line.startswith(" 1 Count the words"))
    assert step1.split()[4:] == ["25", "13", "18", "56", "2", "0", "0.2", "0.7", "0.0", "0.9"]
    assert lines[-1].startswith(
        f"Reading at 230 words/min, 20 s per decision, plus the runs: 1.2 minutes, within the "
        f"aim of {AIM_MINUTES} minutes"
    )
