"""How long the course takes a learner: reading, deciding and running, per step and in total.

The figure printed by ``designlab lint --stats``. For each step::

    reading  = words the learner reads on the step / WORDS_PER_MINUTE
    deciding = SECONDS_PER_DECISION x the step's decisions (form fields)
    running  = the wall time of simulating each scenario the step reads, as measured here,
               or a fixed number of seconds per scenario when one is given

The words read on a step are its title and narrative (figures filled in from the reference
design, Markdown reduced to its text), every decision's label, help, unit and choice labels, and the
feedback the *starting design* gets when the learner runs the step before changing anything:
each check's title and message, and, for a check that does not pass, its explanation and hint
(app/grading/grader.py; templates/_results.html shows those; a passing check's figures are folded
away and not counted). The starting design is the design a learner without saved work has:
``simulator.design.Design()`` (app/designs.py). The overview page (course title, problem, how it
works, what you'll build, each step's title and summary) is one more row.

A word is a whitespace-separated token holding at least one letter or digit, so ``->`` or a
Markdown table rule is no word, while ``85,000`` and ``max.poll.records`` are one each.
WORDS_PER_MINUTE is the mean silent reading rate of adults for non-fiction in English, 238
words/min (M. Brysbaert, "How many words do we read per minute?", Journal of Memory and Language
109, 2019), rounded down for technical text; SECONDS_PER_DECISION is the course's own allowance
for reading a form field's options and choosing one (issue 15).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache

from markdown_it import MarkdownIt

from app.course.content import LoadedCourse, LoadedStep
from app.course.figures import narrative_with_figures
from app.grading.grader import CourseMaterial, Simulate, grade
from app.grading.result import CheckResult, GradeResult
from simulator import simulate as simulator_simulate
from simulator.design import Design
from simulator.result import SimulationResult
from simulator.scenario import Scenario

WORDS_PER_MINUTE = 230
"""Reading rate of the figure, in words per minute (source in the module docstring)."""

SECONDS_PER_DECISION = 20
"""Time allowed for each decision (form field), in seconds."""

AIM_MINUTES = 55
"""The course's aim for the whole figure, in minutes (issue 15: about 50, at most 55)."""

Clock = Callable[[], float]
"""A monotonic clock in seconds, such as time.perf_counter."""


def count_words(text: str) -> int:
    """Words in ``text``: whitespace-separated tokens holding at least one letter or digit."""
    return sum(1 for token in text.split() if any(ch.isalnum() for ch in token))


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    return MarkdownIt("commonmark").enable(["table"])


def markdown_text(source: str) -> str:
    """The text a reader sees of Markdown ``source``: inline text, code spans and code blocks,
    without the markup (``**``, ``#``, table rules, link targets)."""
    parts: list[str] = []
    for token in _markdown().parse(source):
        if token.type in ("fence", "code_block"):
            parts.append(token.content)
        for child in token.children or ():
            if child.type in ("text", "code_inline"):
                parts.append(child.content)
            elif child.type in ("softbreak", "hardbreak"):
                parts.append("\n")
        parts.append("\n")
    return " ".join(parts)


@dataclass(frozen=True)
class StepTime:
    """One row of the figure: a step (or the overview, number 0) and its parts.

    Words are counts; seconds are seconds of the learner's time.
    """

    number: int
    title: str
    narrative_words: int
    decision_words: int
    feedback_words: int
    decisions: int
    runs: int
    """Scenarios the step simulates when it is run (a step's and its checks' own)."""
    run_seconds: float

    @property
    def words(self) -> int:
        """Every word read on the step."""
        return self.narrative_words + self.decision_words + self.feedback_words

    @property
    def reading_seconds(self) -> float:
        """``words`` at WORDS_PER_MINUTE."""
        return self.words * 60 / WORDS_PER_MINUTE

    @property
    def deciding_seconds(self) -> float:
        """SECONDS_PER_DECISION for each decision."""
        return self.decisions * SECONDS_PER_DECISION

    @property
    def total_seconds(self) -> float:
        """Reading, deciding and running."""
        return self.reading_seconds + self.deciding_seconds + self.run_seconds


@dataclass(frozen=True)
class CourseTime:
    """The overview row and one row per step, with their sums."""

    rows: tuple[StepTime, ...]

    @property
    def words(self) -> int:
        """Every word read in the course."""
        return sum(r.words for r in self.rows)

    @property
    def feedback_words(self) -> int:
        """Words of feedback on the starting design, all steps."""
        return sum(r.feedback_words for r in self.rows)

    @property
    def decisions(self) -> int:
        """Form fields in the course."""
        return sum(r.decisions for r in self.rows)

    @property
    def runs(self) -> int:
        """Scenario simulations, one run of every step."""
        return sum(r.runs for r in self.rows)

    @property
    def reading_seconds(self) -> float:
        """Reading time of every row, in seconds."""
        return sum(r.reading_seconds for r in self.rows)

    @property
    def deciding_seconds(self) -> float:
        """Deciding time of every row, in seconds."""
        return sum(r.deciding_seconds for r in self.rows)

    @property
    def run_seconds(self) -> float:
        """Running time of every row, in seconds."""
        return sum(r.run_seconds for r in self.rows)

    @property
    def total_seconds(self) -> float:
        """The whole figure, in seconds."""
        return sum(r.total_seconds for r in self.rows)

    @property
    def total_minutes(self) -> float:
        """The whole figure, in minutes."""
        return self.total_seconds / 60


def overview_words(course: LoadedCourse) -> int:
    """Words of the overview page: course title, problem, the two lists and each step's title
    and summary (templates/overview.html)."""
    meta = course.course
    if meta is None:
        return 0
    texts = [meta.title, meta.problem, *meta.how_it_works, *meta.what_you_build]
    for loaded in course.steps:
        texts.append(loaded.title)
        if loaded.step is not None:
            texts.append(loaded.step.summary)
    return sum(count_words(t) for t in texts)


def narrative_words(course: LoadedCourse, loaded: LoadedStep) -> int:
    """Words of a step's title and narrative, with its figures filled in."""
    return count_words(loaded.title) + count_words(
        markdown_text(narrative_with_figures(course, loaded))
    )


def decision_words(loaded: LoadedStep) -> int:
    """Words of a step's decision labels, help, units and choice labels."""
    if loaded.step is None:
        return 0
    texts: list[str] = []
    for decision in loaded.step.decisions:
        texts += [decision.label, decision.help, decision.unit]
        texts += [choice.label for choice in decision.choices]
    return sum(count_words(t) for t in texts)


def feedback_words(checks: Iterable[CheckResult]) -> int:
    """Words of a run's feedback: every check's title and message, plus explanation and hint of
    the checks that did not pass (what templates/_results.html shows unfolded)."""
    total = 0
    for check in checks:
        texts = [check.title, check.message]
        if check.status != "pass":
            texts += [check.explanation, check.hint]
        total += sum(count_words(t) for t in texts)
    return total


def step_scenarios(loaded: LoadedStep, course: LoadedCourse) -> list[str]:
    """The scenarios a run of the step simulates: its own and its checks' (each once)."""
    if loaded.step is None:
        return []
    wanted = [loaded.step.scenario, *(c.scenario for c in loaded.step.checks)]
    names: list[str] = []
    for name in wanted:
        if name and name in course.scenarios and name not in names:
            names.append(name)
    return names


def _timed(simulate: Simulate, clock: Clock, seconds: dict[str, float]) -> Simulate:
    """``simulate`` that records each scenario's wall time (by scenario name) in ``seconds``."""

    def timed(design: Design, scenario: Scenario, seed: int) -> SimulationResult:
        started = clock()
        try:
            return simulate(design, scenario, seed)
        finally:
            seconds[scenario.name] = seconds.get(scenario.name, 0.0) + clock() - started

    return timed


def course_time(
    material: CourseMaterial,
    *,
    run_seconds: float | None = None,
    simulate: Simulate | None = None,
    clock: Clock = time.perf_counter,
    starting_design: Design | None = None,
) -> CourseTime:
    """The figure for the course in ``material``.

    The starting design (default ``Design()``) is graded once, every scenario simulated with its
    own seed; its feedback gives each step's feedback words. ``run_seconds`` is a fixed time per
    scenario simulation; None measures each simulation's wall time with ``clock`` (a scenario
    several steps read counts its time on each, as each step's run simulates it anew for the
    learner's changed design). Never raises for a failing simulation: its check shows the error
    message, which is counted like any message.
    """
    loaded = material.loaded
    measured: dict[str, float] = {}
    simulate = _timed(simulate or simulator_simulate, clock, measured)
    result: GradeResult = grade(starting_design or Design(), material, simulate=simulate)
    feedback = {s.id: s.checks for s in result.steps}
    rows = [StepTime(0, "Overview", overview_words(loaded), 0, 0, 0, 0, 0.0)]
    for step in loaded.steps:
        names = step_scenarios(step, loaded)
        by_name = {n: loaded.scenarios[n].name for n in names}
        if run_seconds is None:
            seconds = sum(measured.get(by_name[n], 0.0) for n in names)
        else:
            seconds = run_seconds * len(names)
        rows.append(
            StepTime(
                number=step.number,
                title=step.title,
                narrative_words=narrative_words(loaded, step),
                decision_words=decision_words(step),
                feedback_words=feedback_words(feedback.get(step.slug, [])),
                decisions=len(step.step.decisions) if step.step is not None else 0,
                runs=len(names),
                run_seconds=seconds,
            )
        )
    return CourseTime(tuple(rows))


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f}"


def stats_table(figure: CourseTime) -> list[str]:
    """The figure as text lines: a row per step, the total, and the total against AIM_MINUTES."""
    head = (
        f"{'step':<40} {'narr':>5} {'decis':>5} {'feedb':>5} {'words':>6} {'fields':>6} "
        f"{'runs':>4} {'read':>5} {'decide':>6} {'run':>5} {'total':>6}"
    )
    lines = [head, "-" * len(head)]

    def row(label: str, r: StepTime | CourseTime, narr: int, decis: int) -> str:
        return (
            f"{label:<40.40} {narr:>5} {decis:>5} {r.feedback_words:>5} {r.words:>6} "
            f"{r.decisions:>6} {r.runs:>4} {_minutes(r.reading_seconds):>5} "
            f"{_minutes(r.deciding_seconds):>6} {_minutes(r.run_seconds):>5} "
            f"{_minutes(r.total_seconds):>6}"
        )

    for r in figure.rows:
        label = f"{r.number:>2} {r.title}" if r.number else r.title
        lines.append(row(label, r, r.narrative_words, r.decision_words))
    lines.append("-" * len(head))
    narr = sum(r.narrative_words for r in figure.rows)
    decis = sum(r.decision_words for r in figure.rows)
    lines.append(row("total", figure, narr, decis))
    total = figure.total_minutes
    verdict = "within" if total <= AIM_MINUTES else "over"
    lines.append(
        f"Reading at {WORDS_PER_MINUTE} words/min, {SECONDS_PER_DECISION} s per decision, plus "
        f"the runs: {total:.1f} minutes, {verdict} the aim of {AIM_MINUTES} minutes "
        f"(minutes per column; narr, decis, feedb: words of the narrative, the decisions and "
        f"the feedback on the starting design)."
    )
    return lines
