"""The course content holds the rules its authors agreed: lint-clean, 3-8 checks a step, unique
check ids, about 50 minutes, figures computed (never typed), headings for every concept."""

from __future__ import annotations

import re

from app.course.content import LoadedCourse
from app.course.figures import MISSING, PLACEHOLDER, narrative_with_figures, step_figures
from app.course.narrative import heading_anchors
from simulator.design import Design
from simulator.files import load_design

PLACEHOLDER_LEFT = re.compile(r"\{\{\s*figures\.")

EXPECTED_TITLES = [
    "Design the run API",
    "Design the data model",
    "Record every step in a durable event log",
    "Exactly-once effects from at-least-once delivery",
    "Buy the model's capacity and cache its answers",
    "Orchestrator-worker or peer agents",
    "Scale to the evening peak within budget",
    "Checkpoint granularity",
    "Survive lost, paused and redeployed workers",
    "Side-effecting tools and compensation",
    "Fail over the state store",
    "Poison messages and dead letters",
    "Survive a model provider outage",
]


def test_course_loads_without_errors_or_warnings(course: LoadedCourse):
    assert [str(p) for p in course.problems] == []


def test_the_thirteen_steps_in_order(course: LoadedCourse):
    assert [s.title for s in course.steps] == EXPECTED_TITLES


def test_each_step_has_one_to_eight_checks(course: LoadedCourse):
    """One check per consequence a step teaches (a mistake costs points in one place)."""
    counts = {s.slug: len(s.step.checks) for s in course.steps if s.step}
    assert all(1 <= n <= 8 for n in counts.values()), counts


def test_check_ids_are_unique_across_the_course(course: LoadedCourse):
    ids = [c.id for s in course.steps if s.step for c in s.step.checks]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)


def test_steps_add_up_to_about_fifty_minutes(course: LoadedCourse):
    assert course.course is not None
    total = sum(s.step.minutes for s in course.steps if s.step)
    assert course.course.minutes == 50
    assert 45 <= total <= 55, total


def test_every_concept_names_a_heading_of_its_narrative(course: LoadedCourse):
    for step in course.steps:
        assert step.step is not None
        anchors = set(heading_anchors(step.narrative))
        for check in step.step.checks:
            assert check.concept in anchors, f"{step.folder}: {check.id} -> {check.concept!r}"


def test_every_figure_is_declared_used_and_computed(course: LoadedCourse):
    for step in course.steps:
        assert step.step is not None
        shown = step_figures(course, step)
        used = set(PLACEHOLDER.findall(step.narrative))
        assert used == set(step.step.figures), f"{step.folder}: placeholders vs figures"
        assert all(text and text != MISSING for text in shown.values()), (step.folder, shown)
        assert not PLACEHOLDER_LEFT.search(narrative_with_figures(course, step)), step.folder


def test_figures_show_the_reference_numbers(course: LoadedCourse):
    """Spot values a learner reads, recomputed here from the peak load by hand."""
    by_slug = {s.slug: step_figures(course, s) for s in course.steps}
    assert by_slug["event-log"]["in_flight"] == "20"  # 0.5 runs/s x 20 calls x 2.0 s
    # (3 h x 0.5 + 21 h x 0.1 runs/s) x 3600 s x 30 days
    assert by_slug["evening-peak"]["runs_per_month"] == "388,800"
    assert by_slug["agents-tools-model"]["tpm_demand"] == "1,080,000"  # 600 calls/min x 1,800
    assert by_slug["event-log"]["top_tenant_pct"] == "21"  # 1 / H(200, 1.1) = 0.2128


def test_no_exclamation_marks_in_learner_text(course: LoadedCourse):
    for step in course.steps:
        assert step.step is not None
        texts = [step.narrative, step.step.summary, step.step.recap]
        for check in step.step.checks:
            texts += [check.title, check.pass_message, check.fail_message, check.hint]
            texts.append(check.explain)
        for text in texts:
            assert "!" not in text.replace("!=", ""), f"{step.folder}: {text[:60]}"


def test_known_bad_designs_each_change_the_reference(course: LoadedCourse):
    assert course.course is not None and course.reference_design is not None
    reference = course.reference_design.model_dump(mode="json")
    assert len(course.course.known_bad) >= 15
    files = [bad.file for bad in course.course.known_bad]
    assert len(files) == len(set(files))
    for bad in course.course.known_bad:
        design = load_design(course.root / bad.file)
        assert isinstance(design, Design)
        changed = _diff(reference, design.model_dump(mode="json"))
        assert 1 <= len(changed - {"name"}) <= 3, f"{bad.file} changes {sorted(changed)}"
        assert bad.why


def _diff(a: dict, b: dict, prefix: str = "") -> set[str]:
    out: set[str] = set()
    for key in a.keys() | b.keys():
        va, vb = a.get(key), b.get(key)
        path = f"{prefix}{key}"
        if isinstance(va, dict) and isinstance(vb, dict):
            out |= _diff(va, vb, path + ".")
        elif va != vb:
            out.add(path)
    return out
