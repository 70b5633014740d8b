"""The report card: the saved design graded like the CLI grades the downloaded file; the design
file out (download) and back in (upload); starting over."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli import main
from app.models import DesignRecord, StepProgress, StepStatus, User
from tests.web.html import csrf_of, soup
from tests.web.learner import HX, rows, step_form, words
from tests.web.learner_course import write_learner_course


@pytest.fixture
def learner_dir(tmp_path: Path) -> Path:
    return write_learner_course(tmp_path / "course")


@pytest.fixture
def learner(make_client, learner_dir):
    client = make_client(steps_dir=learner_dir)
    form = step_form(client, "event-log", event_log__partitions="30", delivery__dedupe="in_memory")
    assert client.post("/steps/event-log/run", data=form, headers=HX).status_code == 200
    return client


def test_the_downloaded_design_grades_the_same_on_the_command_line(learner, learner_dir, tmp_path):
    page = soup(learner.get("/report"))
    total = page.select_one("tfoot td.num").get_text(strip=True)
    per_step = {
        tr["data-step"]: tr.select_one("td.num").get_text(strip=True)
        for tr in page.select("table.report-steps tbody tr")
    }
    download = learner.get("/design.yaml")
    assert download.headers["content-disposition"] == 'attachment; filename="design.yaml"'
    path = tmp_path / "design.yaml"
    path.write_text(download.text)
    result = CliRunner().invoke(
        main, ["grade", str(path), "--format", "json", "--steps-dir", str(learner_dir)]
    )
    graded = json.loads(result.stdout)
    assert total == f"{graded['points']}/{graded['max_points']}"
    assert per_step == {s["id"]: f"{s['points']}/{s['max_points']}" for s in graded["steps"]}
    assert per_step["event-log"] == "3/5"
    assert result.exit_code == 1, "a failing check makes the CLI exit 1"


def test_the_report_shows_each_fault_scenario_and_the_cost_against_the_budget(learner):
    page = soup(learner.get("/report"))
    (row,) = page.select("table.report-faults tbody tr")
    assert row["data-scenario"] == "crash"
    cells = [words(td) for td in row.select("td")]
    assert cells[0] == "worker crash"
    assert len(cells) == 5
    assert "of $85,000" in words(page.select_one("section[aria-labelledby=cost-heading] p"))
    assert words(page.select_one("#cost-of")).startswith(
        "Your whole design as saved, priced for a month of the peak scenario's load from its own "
        "simulation."
    )
    assert page.select_one("#chart-cost-data") is not None
    assert page.select_one("pre.command").get_text() == "designlab grade design.yaml"


def test_an_invalid_upload_names_file_line_and_field_and_changes_nothing(learner, make_settings):
    token = csrf_of(soup(learner.get("/report")))
    bad = b"version: 1\nevent_log:\n  partitions: 0\n"
    response = learner.post(
        "/design",
        data={"csrf_token": token},
        files={"design": ("mine.yaml", bad, "application/yaml")},
    )
    assert response.status_code == 422
    problem = words(soup(response).select_one(".upload .problems li"))
    assert (
        problem == "mine.yaml:3 event_log.partitions : Input should be greater than or equal to 1"
    )
    # Said at the top too, before the score of the saved design, with a link to the problems.
    page = soup(response)
    top = page.select_one(".report-head #upload-refused")
    assert top is not None and top.get("role") == "alert"
    assert words(top).startswith("Your upload was not used. The file is not a valid design")
    assert top.select_one("a")["href"] == "#design-file"
    (record,) = rows(make_settings(), DesignRecord)
    assert "partitions: 30" in record.yaml_text


def test_case6_an_upload_with_a_key_given_twice_is_refused_naming_line_and_key(
    learner, make_settings
):
    token = csrf_of(soup(learner.get("/report")))
    twice = learner.get("/design.yaml").text + "event_log:\n  partitions: 12\n"
    response = learner.post(
        "/design",
        data={"csrf_token": token},
        files={"design": ("mine.yaml", twice.encode(), "application/yaml")},
    )
    assert response.status_code == 422
    problem = words(soup(response).select_one(".upload .problems li"))
    assert problem.startswith(f"mine.yaml:{len(twice.splitlines()) - 1} event_log :")
    assert "duplicate key 'event_log'" in problem
    (record,) = rows(make_settings(), DesignRecord)
    assert "partitions: 30" in record.yaml_text


def test_an_upload_replaces_the_design_and_marks_run_steps_to_rerun(learner, make_settings):
    token = csrf_of(soup(learner.get("/report")))
    good = learner.get("/design.yaml").text.replace("partitions: 30", "partitions: 48")
    response = learner.post(
        "/design",
        data={"csrf_token": token},
        files={"design": ("design.yaml", good.encode(), "application/yaml")},
        follow_redirects=False,
    )
    assert response.status_code == 303 and response.headers["location"].endswith("/report")
    (record,) = rows(make_settings(), DesignRecord)
    assert "partitions: 48" in record.yaml_text
    overview = soup(learner.get("/"))
    assert words(overview.select_one("li[data-step='event-log'] .badge")) == ("needs re-run")
    step = soup(learner.get("/steps/event-log"))
    assert step.select_one("input[name='event_log.partitions']")["value"] == "48"


def test_uploading_the_downloaded_design_back_costs_no_progress(learner, make_settings):
    before = {p.step_id: p.status for p in rows(make_settings(), StepProgress)}
    assert before == {"event-log": StepStatus.failed}
    (record,) = rows(make_settings(), DesignRecord)
    token = csrf_of(soup(learner.get("/report")))
    response = learner.post(
        "/design",
        data={"csrf_token": token},
        files={"design": ("design.yaml", learner.get("/design.yaml").content, "application/yaml")},
    )
    assert response.status_code == 200
    assert "nothing changed, and every run stands" in words(soup(response).select_one(".notice"))
    assert {p.step_id: p.status for p in rows(make_settings(), StepProgress)} == before
    (after,) = rows(make_settings(), DesignRecord)
    assert after.version == record.version


def test_an_upload_without_the_csrf_token_is_refused(learner, make_settings):
    response = learner.post(
        "/design", files={"design": ("design.yaml", b"version: 1\n", "application/yaml")}
    )
    assert response.status_code == 403
    assert "session expired" in words(soup(response).select_one(".upload .error-box"))
    (record,) = rows(make_settings(), DesignRecord)
    assert "partitions: 30" in record.yaml_text


def browser_form_without_a_file(token: str) -> tuple[bytes, dict[str, str]]:
    """The body a browser sends for the upload form when no file was chosen: the file part is
    there, with an empty file name and no content."""
    boundary = "designlab-test-boundary"
    body = (
        f"--{boundary}\r\n"
        'Content-Disposition: form-data; name="csrf_token"\r\n\r\n'
        f"{token}\r\n"
        f"--{boundary}\r\n"
        'Content-Disposition: form-data; name="design"; filename=""\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
        "\r\n"
        f"--{boundary}--\r\n"
    ).encode()
    return body, {"Content-Type": f"multipart/form-data; boundary={boundary}"}


@pytest.mark.parametrize("headers", [{}, HX], ids=["form", "htmx"])
def test_an_upload_without_a_file_asks_for_one_and_changes_nothing(learner, make_settings, headers):
    token = csrf_of(soup(learner.get("/report")))
    body, content_type = browser_form_without_a_file(token)
    response = learner.post("/design", content=body, headers={**content_type, **headers})
    assert response.status_code == 422
    box = soup(response).select_one(".upload .error-box")
    assert words(box) == "Choose a design.yaml file to upload; nothing was changed."
    assert soup(response).select_one("#design-file")["aria-invalid"] == "true"
    (record,) = rows(make_settings(), DesignRecord)
    assert "partitions: 30" in record.yaml_text
    status = {p.step_id: p.status for p in rows(make_settings(), StepProgress)}
    assert status["event-log"] is not StepStatus.needs_rerun


def test_a_visitor_posting_the_form_without_its_file_field_gets_422_and_no_guest(
    make_client, learner_dir, make_settings
):
    visitor = make_client(steps_dir=learner_dir)
    token = csrf_of(soup(visitor.get("/report")))
    response = visitor.post("/design", data={"csrf_token": token})
    assert response.status_code == 422
    assert "Choose a design.yaml file" in words(soup(response).select_one(".upload .error-box"))
    assert rows(make_settings(), User) == []


def test_an_upload_without_a_file_or_the_csrf_token_is_refused_as_expired(learner):
    body, content_type = browser_form_without_a_file("not-the-token")
    response = learner.post("/design", content=body, headers=content_type)
    assert response.status_code == 403
    assert "session expired" in words(soup(response).select_one(".upload .error-box"))


def test_start_over_keeps_the_design_and_clears_progress(learner, make_settings):
    token = csrf_of(soup(learner.get("/report")))
    response = learner.post("/progress/restart", data={"csrf_token": token}, follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"].endswith("/steps/commit-order")
    assert rows(make_settings(), StepProgress) == []
    assert len(rows(make_settings(), DesignRecord)) == 1


def test_the_overview_leads_to_the_report_card_once_a_step_was_run(learner, make_client):
    link = soup(learner.get("/")).select_one("p.actions a#report-link")
    assert link is not None and link["href"].endswith("/report")
    assert link.get_text(strip=True) == "Your report card"
    assert soup(make_client().get("/")).select_one("#report-link") is None  # not for a newcomer


def test_case_5_a_step_that_could_not_run_says_why_on_the_report_card(make_client, learner_dir):
    """A step whose simulation is over the size budget shows "could not run" with the reason."""
    client = make_client(steps_dir=learner_dir, sim_max_step_events=10)
    page = soup(client.get("/report"))
    rows_ = page.select("tr.row-error")
    assert rows_, "a simulated step must be over a budget of 10 events"
    for row in rows_:
        reason = row.select_one(".why-not-run")
        assert reason is not None and "too large to simulate" in words(reason)
