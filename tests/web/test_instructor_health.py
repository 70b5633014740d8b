"""Course health: lint findings per file (the same as ``designlab lint``) and the self-test."""

from __future__ import annotations

import shutil

import pytest
from typer.testing import CliRunner

from app.cli import main
from app.instructor.health import course_version
from app.models import Role
from tests.instructor.second_course import SECOND_COURSE
from tests.instructor.signing_in import add_user, sign_in
from tests.web.html import csrf_of, soup

SELF_TEST_SECONDS = 120


def wait_for_self_test(client, root) -> None:
    """Block until the self-test of the course folder's current version has finished."""
    run = client.app.state.self_tests.get(course_version(root))
    assert run is not None, "no self-test was started"
    assert run.done.wait(SELF_TEST_SECONDS), "the self-test did not finish"


@pytest.fixture
def second_course_dir(tmp_path):
    """A copy of the second course, safe to edit."""
    return shutil.copytree(SECOND_COURSE, tmp_path / "second_course")


@pytest.fixture
def instructor(make_client, make_settings, second_course_dir):
    """Sign an instructor in to the app serving a copy of the second course (safe to edit)."""

    def build():
        client = make_client(steps_dir=second_course_dir, env="development")
        add_user(make_settings(), "ina@example.com", Role.instructor)
        sign_in(client, "ina@example.com")
        return client

    return build


def break_the_course(root) -> None:
    """Two errors (an unknown scenario, a concept naming no heading), one warning (an unlisted
    folder)."""
    step2 = root / "02-commit-after-work" / "step.yaml"
    step2.write_text(step2.read_text().replace("scenario: worker-restart", "scenario: restart"))
    step1 = root / "01-size-the-group" / "step.yaml"
    step1.write_text(step1.read_text().replace("concept: the-key", "concept: the-keys"))
    (root / "99-draft").mkdir()
    (root / "99-draft" / "step.yaml").write_text("id: draft\n")


def line_of(path, text: str) -> int:
    """1-based number of the line of ``path`` that holds ``text``."""
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def test_lint_findings_are_the_ones_designlab_lint_prints(instructor, second_course_dir):
    break_the_course(second_course_dir)
    cli = CliRunner().invoke(main, ["lint", str(second_course_dir)])
    assert cli.exit_code == 1
    *printed, summary = cli.output.strip().splitlines()
    page = soup(instructor().get("/instructor/health"))
    shown = [li["data-lint"] for li in page.select("section.file-findings li.problem")]
    assert shown == printed
    assert len(shown) == 3
    assert page.select_one(".lint-summary").get_text(strip=True) == summary
    assert summary == "3 steps: 2 errors, 1 warning"


def test_lint_findings_are_grouped_per_file_with_line_numbers(instructor, second_course_dir):
    break_the_course(second_course_dir)
    page = soup(instructor().get("/instructor/health"))
    files = {
        s["data-file"]: [li.select_one("code").get_text() for li in s.select("li.problem")]
        for s in page.select("section.file-findings")
    }
    step1 = line_of(second_course_dir / "01-size-the-group" / "step.yaml", "concept: the-keys")
    step2 = line_of(second_course_dir / "02-commit-after-work" / "step.yaml", "scenario: restart")
    assert files == {
        "01-size-the-group/step.yaml": [f"01-size-the-group/step.yaml:{step1}"],
        "02-commit-after-work/step.yaml": [f"02-commit-after-work/step.yaml:{step2}"],
        "99-draft": ["99-draft"],
    }
    heading = page.select_one("section[data-file='02-commit-after-work/step.yaml'] h3")
    assert heading.get_text(" ", strip=True).endswith("1 error, 0 warnings")
    clean = [li.get_text() for li in page.select("details.clean-files li")]
    assert "course.yaml" in clean and "02-commit-after-work/step.yaml" not in clean


def test_the_self_test_runs_in_the_background_and_shows_each_design(instructor, second_course_dir):
    client = instructor()
    first = soup(client.get("/instructor/health"))
    assert first.select_one("#self-test .self-test-status") is not None
    wait_for_self_test(client, second_course_dir)
    page = soup(client.get("/instructor/health"))
    status = page.select_one("#self-test .self-test-status")
    assert status["data-state"] == "ok"
    assert status.get_text(" ", strip=True).startswith("Passed: all 5 designs did as intended")
    rows = {
        tr["data-design"]: [td.get_text(strip=True) for td in tr.select("td")]
        for tr in page.select("table.self-test tbody tr")
    }
    assert rows == {
        "designs/reference.yaml": ["nothing", "nothing", "none", "30/30", "ok"],
        "designs/bad/few-partitions.yaml": [
            "partitions-cover-in-flight, peak-keeps-up",
            "partitions-cover-in-flight, peak-keeps-up",
            "none",
            "24/30",
            "ok",
        ],
        "designs/bad/commit-first.yaml": [
            "restart-loses-nothing",
            "restart-loses-nothing",
            "none",
            "26/30",
            "ok",
        ],
        "designs/bad/no-dedupe.yaml": [
            "dedupe-durable, warehouse-keyed",
            "dedupe-durable, warehouse-keyed",
            "none",
            "24/30",
            "ok",
        ],
        "designs/bad/endless-retry.yaml": [
            "poison-parked, retry-limited",
            "poison-parked, retry-limited",
            "none",
            "24/30",
            "ok",
        ],
    }


def test_a_known_bad_design_that_fails_the_wrong_checks_is_flagged(instructor, second_course_dir):
    course_yaml = second_course_dir / "course.yaml"
    course_yaml.write_text(
        course_yaml.read_text().replace(
            "fails: [partitions-cover-in-flight, peak-keeps-up]",
            "fails: [partitions-cover-in-flight, key-per-order]",
        )
    )
    client = instructor()
    client.get("/instructor/health")
    wait_for_self_test(client, second_course_dir)
    page = soup(client.get("/instructor/health"))
    assert page.select_one("#self-test .self-test-status")["data-state"] == "failing"
    row = page.select_one("tr[data-design='designs/bad/few-partitions.yaml']")
    assert "not-ok" in row["class"]
    assert row.select("td")[-1].get_text(strip=True) == (
        "designs/bad/few-partitions.yaml: passed key-per-order but should fail; "
        "failed peak-keeps-up unexpectedly"
    )


def test_htmx_polls_only_the_self_test_block_until_it_has_finished(instructor, second_course_dir):
    client = instructor()
    client.get("/instructor/health")
    wait_for_self_test(client, second_course_dir)
    response = client.get("/instructor/health", headers={"HX-Request": "true"})
    fragment = soup(response)
    section = fragment.select_one("section#self-test")
    assert section is not None and fragment.select_one("h1") is None
    assert not section.has_attr("hx-trigger")  # finished: polling stops


def test_an_edit_starts_a_new_self_test_and_run_again_repeats_it(instructor, second_course_dir):
    client = instructor()
    client.get("/instructor/health")
    wait_for_self_test(client, second_course_dir)
    before = client.app.state.self_tests.get(course_version(second_course_dir))
    page = soup(client.get("/instructor/health"))
    response = client.post(
        "/instructor/health/self-test",
        data={"csrf_token": csrf_of(page)},
        follow_redirects=False,
    )
    assert response.status_code == 303
    again = client.app.state.self_tests.get(course_version(second_course_dir))
    assert again is not before
    narrative = second_course_dir / "03-park-poison-orders" / "narrative.md"
    narrative.write_text(narrative.read_text() + "\nOne more line.\n")
    client.get("/instructor/health")
    assert client.app.state.self_tests.get(course_version(second_course_dir)) is not None
    wait_for_self_test(client, second_course_dir)


def test_a_course_yaml_that_does_not_load_is_shown_not_a_503(instructor, second_course_dir):
    course_yaml = second_course_dir / "course.yaml"
    course_yaml.write_text(course_yaml.read_text().replace("budget_usd: 20000", "budget_usd: -1"))
    cli = CliRunner().invoke(main, ["lint", str(second_course_dir)])
    *printed, summary = cli.output.strip().splitlines()
    response = instructor().get("/instructor/health")
    assert response.status_code == 200
    page = soup(response)
    assert [li["data-lint"] for li in page.select("li.problem")] == printed
    assert printed[0].startswith(f"{course_yaml}:{line_of(course_yaml, 'budget_usd')}: error: ")
    assert page.select_one(".lint-summary").get_text(strip=True) == summary
    assert page.select_one("#self-test .self-test-status")["data-state"] == "waiting"


def test_a_check_left_not_exercised_has_its_own_column(instructor, second_course_dir):
    """commit-first fails restart-loses-nothing; here its runs also leave dedupe-durable with
    nothing to judge (course.yaml allows it: ``unjudged``). Its 4 points are missing too, so the
    table names it beside the failed check rather than leaving 22/30 unexplained."""
    step2 = second_course_dir / "02-commit-after-work" / "step.yaml"
    head, tail = step2.read_text().split("  - id: dedupe-durable\n")
    needs = "      expr: metrics.processed > 0\n"
    idle = needs.replace("> 0", '> 0 and design.delivery.commit != "before_processing"')
    step2.write_text(head + "  - id: dedupe-durable\n" + tail.replace(needs, idle, 1))
    course_yaml = second_course_dir / "course.yaml"
    entry = "    fails: [restart-loses-nothing]\n"
    course_yaml.write_text(
        course_yaml.read_text().replace(entry, entry + "    unjudged: [dedupe-durable]\n")
    )
    client = instructor()
    client.get("/instructor/health")
    wait_for_self_test(client, second_course_dir)
    page = soup(client.get("/instructor/health"))
    head = [th.get_text(strip=True) for th in page.select("table.self-test thead th")]
    assert head == ["Design", "Must fail", "Failed", "Not exercised", "Points", "Verdict"]
    row = page.select_one("tr[data-design='designs/bad/commit-first.yaml']")
    assert [" ".join(td.get_text(" ", strip=True).split()) for td in row.select("td")] == [
        "restart-loses-nothing",
        "restart-loses-nothing",
        "dedupe-durable (allowed: course.yaml lists it as unjudged)",
        "22/30",
        "ok",
    ]
