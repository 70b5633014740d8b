"""Lint refuses, with file, line and field, course mistakes that used to pass it and then broke
grading or judged the wrong thing (review 4): a fault index past the scenario in a template, an
unknown dict key, an enum compared with a value it lacks, errors hidden behind one unknown key,
check ids repeated across steps, a folder listed twice, a step id other than its folder's name,
a concept naming no heading, bounds printed as 1e+08. Each test edits a copy of the real course."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli import main
from app.course.content import LoadedCourse
from app.course.loader import load_course
from simulator.cost import monthly_cost
from simulator.files import load_design
from simulator.pricing import load_pricing
from simulator.result import Cost

REPO_STEPS = Path(__file__).resolve().parents[3] / "steps"
STEP4 = Path("04-exactly-once-effects") / "step.yaml"


@pytest.fixture
def course(tmp_path: Path) -> Path:
    root = tmp_path / "steps"
    shutil.copytree(REPO_STEPS, root)
    return root


def replace(path: Path, old: str, new: str) -> int:
    """Replace ``old`` (exactly once) by ``new``; the 1-based line where it starts."""
    text = path.read_text()
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new))
    return text[: text.index(old)].count("\n") + 1


def line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def found(course: Path) -> list[tuple[str, int | None, str, str]]:
    """(file relative to the course, line, field, message) of every error."""
    return [
        (str(Path(p.file).relative_to(course)), p.line, p.field, p.message)
        for p in load_course(course).errors
    ]


def test_a_fault_index_past_the_scenario_in_a_template_is_an_error(course):
    """Step 4's scenario has 2 faults; ``scenario.faults[7]`` in explain made grading exit 3."""
    step = course / STEP4
    line = replace(step, "{% set f = scenario.faults[1] %}", "{% set f = scenario.faults[7] %}")
    assert found(course) == [
        (
            str(STEP4),
            line - 1,  # the explain key; the template starts on the next line
            "checks.0.explain",
            "template line 1: reads scenario.faults[7], but scenario 'instance-crash' has 2 "
            "fault(s): graded, it fails (no element 7)",
        )
    ]


def test_a_field_the_fault_does_not_have_is_an_error_through_a_set_name(course):
    """``f`` stands for ``scenario.faults[1]``, a worker_crash: it has ``instances`` but no
    ``brokers`` (a broker_loss field), which grading would find undefined."""
    step = course / STEP4
    replace(step, "{{ fmt(f.at_seconds, 0) }} s:", "{{ fmt(f.brokers, 0) }} s:")
    [(_, _, field, message)] = found(course)
    assert field == "checks.0.explain"
    assert message == "template line 1: WorkerCrash has no field 'brokers'"


def test_an_unknown_consumer_group_is_an_error_in_an_expr_and_in_a_template(course):
    step = course / STEP4
    after = "\n    pass: >-\n      {{ plural(metrics.redelivered"
    expr_line = replace(
        step,
        "    expr: metrics.duplicate_effects == 0" + after,
        '    expr: metrics.duplicate_effects == 0 and metrics.by_group["agnet"].utilisation < 2'
        + after,
    )
    shown = "{{ fmt(metrics.redelivered) }} redelivered,\n      "
    replace(step, shown + "{{ fmt(metrics.lost) }}", shown + "{{ metrics.by_group.tol.processed }}")
    groups = "the consumer groups are agent, tool, state"
    assert sorted(found(course)) == [
        (
            str(STEP4),
            line_of(step, "Every fetched event was processed") - 1,
            "checks.0.pass",
            f"template line 1: metrics.by_group.tol: no consumer group 'tol': {groups}; "
            "did you mean tool?",
        ),
        (
            str(STEP4),
            expr_line,
            "checks.1.expr",
            f"metrics.by_group['agnet']: no consumer group 'agnet': {groups}; did you mean agent?",
        ),
    ]


def test_an_unknown_capacity_limit_and_cost_component_are_errors():
    from app.checks.explanations import explanation_problems
    from app.checks.expressions import expression_problems

    assert expression_problems('cost.by_component["tokens"] > 0')[0].startswith(
        "cost.by_component['tokens']: no cost component 'tokens': the cost components are "
        "model_tokens, "
    )
    [problem] = explanation_problems(
        '{% set u = metrics.by_group["agent"].limits_utilisation %}{{ pct(u["RPN"]) }}'
    )
    assert problem.startswith("template line 1: u['RPN']: no capacity limit 'RPN': the capacity")
    assert problem.endswith("; did you mean RPM?")
    assert expression_problems('"tol" in estimate.by_group') == [
        "estimate.by_group: no consumer group 'tol': the consumer groups are agent, tool, "
        "state; did you mean tool?"
    ]


def test_a_misspelt_enum_value_in_a_comparison_is_an_error_naming_the_values(course):
    step = course / STEP4
    needs = "      expr: 'metrics.processed > 0 and metrics.redelivered > 0"
    line = replace(
        step,
        needs + "'\n      missing: no applied",
        needs + ' and design.delivery.dedupe != "durable_same_transacton"\'\n'
        "      missing: no applied",
    )
    replace(step, '{% if design.delivery.dedupe == "in_memory" %}the dedupe',
            '{% if design.delivery.dedupe in ("in_memory", "memory") %}the dedupe')  # fmt: skip
    values = "('none', 'in_memory', 'durable_same_transaction')"
    same = "so the comparison gives the same answer whatever the value"
    assert sorted(found(course)) == [
        (
            str(STEP4),
            line,
            "checks.2.needs.expr",
            f"design.delivery.dedupe: 'durable_same_transacton' is none of its values {values}, "
            f"{same}; did you mean durable_same_transaction?",
        ),
        (
            str(STEP4),
            line_of(step, '{% if design.delivery.dedupe == "durable_same_transaction" %}{{ plu')
            - 1,
            "checks.2.fail",
            f"template line 1: design.delivery.dedupe: 'memory' is none of its values {values}, "
            f"{same}; did you mean in_memory?",
        ),
    ]


def test_one_unknown_key_hides_no_other_error_and_no_known_bad_entry_is_blamed(course):
    """The review's case: an unknown ``hints`` key in check 0 used to be the only error shown,
    with nine false "no check ... in the course" errors from course.yaml."""
    step = course / STEP4
    choice = replace(step, "      - {value: in_memory, label:", "      - {value: in_memry, label:")
    low = replace(step, "    min: 0\n    max: 8760", "    min: -5\n    max: 99999999")
    hint = "    hint: Commit after the work, or with it in the effect's transaction.\n"
    extra = replace(step, hint, hint + "    hints: typo key\n") + 1
    bound = (
        "for delivery.dedupe_key_retention_hours: the form would offer values the design refuses"
    )
    assert found(course) == [
        (str(STEP4), extra, "checks.0.hints", "unknown field 'hints': not part of this file's "
         "format (check its spelling and its indentation)"),
        (str(STEP4), choice, "decisions.1.choices.1.value", "'in_memry' for delivery.dedupe: "
         "Input should be 'none', 'in_memory' or 'durable_same_transaction'"),
        (str(STEP4), low, "decisions.2.min", f"min -5 is below the design's own minimum 0 {bound}"),
        (str(STEP4), low + 1, "decisions.2.max",
         f"max 99,999,999 is above the design's own maximum 8,760 {bound}"),
    ]  # fmt: skip
    assert not load_course(course).step("exactly-once-effects").available


def test_a_check_that_does_not_validate_is_left_out_and_the_others_keep_their_lines(course):
    """Check 0 with points -3 is dropped from what lint checks; check 1's error still names
    ``checks.1`` and its own line, and known-bad entries naming check 0 are not blamed."""
    step = course / STEP4
    needs = "\n    needs:\n      expr: 'metrics.processed > 0'\n"
    points = replace(step, "    points: 3" + needs, "    points: -3" + needs)
    after = "\n    pass: >-\n      {{ plural("
    expr = replace(
        step,
        "    expr: metrics.duplicate_effects == 0" + after,
        "    expr: metrics.duplicate_effect == 0" + after,
    )
    [first, second] = found(course)
    assert first == (str(STEP4), points, "checks.0.points",
                     "Input should be greater than or equal to 0")  # fmt: skip
    assert second[:3] == (str(STEP4), expr, "checks.1.expr")
    assert "Metrics has no field 'duplicate_effect'" in second[3]


def test_a_yaml_syntax_error_in_a_step_blames_no_known_bad_entry(course):
    """Step 4 does not parse: its check ids are unknown, so course.yaml's entries naming them are
    not reported as naming no check; one warning says they wait for the step."""
    replace(course / STEP4, "minutes: 5\n", "minutes: [5\n")
    loaded = load_course(course)
    assert [(p.field, p.message) for p in loaded.errors] == [
        ("", "YAML syntax: did not find expected ',' or ']'")
    ]
    [warning] = loaded.warnings
    assert warning.file == str(course / "course.yaml") and warning.line is not None
    assert warning.message == (
        "9 known-bad check name(s) from here on could not be checked: step "
        "04-exactly-once-effects did not load (fix its errors first)"
    )


def new_step(course: Path) -> Path:
    """steps/README "Change or add a step": 08-checkpoints copied to 14-my-step, id renamed."""
    shutil.copytree(course / "08-checkpoints", course / "14-my-step")
    replace(course / "14-my-step" / "step.yaml", "id: checkpoints\n", "id: my-step\n")
    with (course / "course.yaml").open("a") as f:
        f.write("  - 14-my-step\n")
    return course / "14-my-step" / "step.yaml"


def test_a_check_id_used_by_two_steps_is_an_error_in_both(course):
    copy = new_step(course)
    line = line_of(copy, "- id: crash-rework-bounded")
    assert found(course) == [
        ("08-checkpoints/step.yaml", line, "checks.0.id", "check id 'crash-rework-bounded' is "
         "also a check of 14-my-step: ids are unique in the course"),
        ("14-my-step/step.yaml", line, "checks.0.id", "check id 'crash-rework-bounded' is also "
         "a check of 08-checkpoints: ids are unique in the course"),
    ]  # fmt: skip


def test_a_folder_listed_twice_is_one_error_at_its_course_yaml_line(course):
    with (course / "course.yaml").open("a") as f:
        f.write("  - 08-checkpoints\n")
    loaded = load_course(course)
    line = len((course / "course.yaml").read_text().splitlines())
    assert [(p.file, p.line, p.field, p.message) for p in loaded.errors] == [
        (str(course / "course.yaml"), line, "steps.13",
         "08-checkpoints is listed twice (first as step 8); it is loaded once, there"),
    ]  # fmt: skip
    assert len(loaded.steps) == 13


def test_a_step_id_other_than_its_folder_name_is_an_error(course):
    """steps/README: the id is the folder name without its number (an id that only ends it,
    ``effects`` in ``04-exactly-once-effects``, is refused too)."""
    replace(course / STEP4, "id: exactly-once-effects\n", "id: effects\n")
    assert found(course) == [
        (str(STEP4), 1, "id", "id 'effects' does not match the folder name "
         "'04-exactly-once-effects': it must be the folder's name without its number "
         "('exactly-once-effects')"),
    ]  # fmt: skip


def test_a_figure_the_step_does_not_declare_is_an_error_in_the_narrative(course):
    narrative = course / "04-exactly-once-effects" / "narrative.md"
    narrative.write_text(narrative.read_text() + "\nA batch of {{ figures.batches }} records.\n")
    line = len(narrative.read_text().splitlines())
    [(file, at, field, message)] = found(course)
    assert (file, at, field) == ("04-exactly-once-effects/narrative.md", line, "figures.batches")
    assert message.startswith("no figure 'batches' in step.yaml's figures (batch, ")


def test_bounds_print_as_written_and_one_error_is_singular(course):
    replace(course / STEP4, "    max: 8760", "    max: 99999999")
    outcome = CliRunner().invoke(main, ["lint", str(course)])
    assert outcome.exit_code == 1
    lines = outcome.stdout.splitlines()
    assert "max 99,999,999 is above the design's own maximum 8,760" in lines[0]
    assert lines[-1] == "13 steps: 1 error, 0 warnings"
    from app.course.content import lint_summary

    assert lint_summary(1, 2, 1) == "1 step: 2 errors, 1 warning"


def test_the_cost_components_lint_knows_are_every_one_the_bill_has():
    """DICT_KEYS' cost components (app.checks.cost_groups) cover every line simulator.cost
    bills the reference and each known-bad design for, under every scenario of the course."""
    from app.checks.names import DICT_KEYS, Keys

    loaded: LoadedCourse = load_course(REPO_STEPS)
    assert loaded.course is not None
    known = DICT_KEYS[(Cost, "by_component")]
    assert isinstance(known, Keys)
    pricing = load_pricing(REPO_STEPS / loaded.course.pricing)
    files = [loaded.course.reference_design] + [bad.file for bad in loaded.course.known_bad]
    seen: set[str] = set()
    for name in files:
        design = load_design(REPO_STEPS / name)
        for scenario in loaded.scenarios.values():
            bill = monthly_cost(design, scenario, pricing, budget_usd=loaded.course.budget_usd)
            seen |= set(bill.by_component)
    assert seen and seen <= set(known.values), seen - set(known.values)


def test_an_expression_reads_a_dict_by_key_and_a_template_may_by_attribute():
    """simpleeval reads no attribute of a dict (FeatureNotAvailable when graded); Jinja falls
    back to the item, so there ``.agent`` is a key, checked like ``["agent"]``."""
    from app.checks.explanations import explanation_problems
    from app.checks.expressions import expression_problems

    assert expression_problems("metrics.by_group.agent.utilisation < 1") == [
        "metrics.by_group.agent: a mapping has no attributes: read its key with ['agent']"
    ]
    assert expression_problems('metrics.by_group["agent"].utilisation < 1') == []
    assert explanation_problems("{{ pct(metrics.by_group.agent.utilisation) }}") == []
