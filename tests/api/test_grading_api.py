"""POST /api/v1/grade and /api/v1/simulate: the CLI's JSON for JSON, YAML and uploaded designs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from app.cli import main as cli
from app.main import create_app

FIXTURE = Path(__file__).resolve().parents[1] / "grading" / "fixtures" / "course"
REFERENCE = FIXTURE / "designs" / "reference.yaml"
THIN_LOG = FIXTURE / "designs" / "bad" / "thin-log.yaml"


@pytest.fixture
def api(make_settings):
    app = create_app(make_settings(steps_dir=FIXTURE))
    with TestClient(app) as client:
        yield client


def cli_json(design: Path, *extra: str) -> dict:
    outcome = CliRunner().invoke(
        cli, ["grade", str(design), "--format", "json", "--steps-dir", str(FIXTURE), *extra]
    )
    assert outcome.exit_code in (0, 1), outcome.output
    return json.loads(outcome.stdout)


def test_json_body_gives_the_cli_result(api):
    """The design posted as JSON grades exactly as `designlab grade --format json`."""
    design = yaml.safe_load(THIN_LOG.read_text())
    response = api.post("/api/v1/grade", json=design)
    assert response.status_code == 200
    assert response.json() == cli_json(THIN_LOG)
    assert response.json()["status"] == "fail"


def test_yaml_upload_gives_the_cli_result(api):
    """A multipart upload of design.yaml, with a seed, equals the CLI with that seed."""
    files = {"design": ("design.yaml", REFERENCE.read_bytes(), "application/yaml")}
    response = api.post("/api/v1/grade?seed=11", files=files)
    assert response.status_code == 200
    assert response.json() == cli_json(REFERENCE, "--seed", "11")
    assert response.json()["seed"] == 11


def test_raw_yaml_body_is_accepted(api):
    """application/yaml text works as well as an upload."""
    response = api.post(
        "/api/v1/grade",
        content=REFERENCE.read_bytes(),
        headers={"content-type": "application/yaml"},
    )
    assert response.status_code == 200
    assert response.json()["status"] == "pass"


def test_an_invalid_design_is_422_naming_file_line_and_field(api):
    """partitions: 0 in an upload: status error, the upload's name, line 4 and the field."""
    files = {
        "design": ("mine.yaml", b"version: 1\nname: x\nevent_log:\n  partitions: 0\n", "text/yaml")
    }
    response = api.post("/api/v1/grade", files=files)
    assert response.status_code == 422
    body = response.json()
    assert body["status"] == "error"
    assert body["errors"] == [
        {
            "file": "mine.yaml",
            "line": 4,
            "field": "event_log.partitions",
            "message": "Input should be greater than or equal to 1",
        }
    ]


def test_json_errors_keep_their_line(api):
    """A JSON body is read with line tracking: the bad field's line is reported."""
    body = '{\n  "version": 1,\n  "event_log": {\n    "partitions": "many"\n  }\n}'
    response = api.post("/api/v1/grade", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 422
    [error] = response.json()["errors"]
    assert (error["file"], error["line"], error["field"]) == (
        "design.json",
        4,
        "event_log.partitions",
    )


def test_malformed_json_is_422(api):
    """Broken JSON is bad input with the line of the syntax error."""
    response = api.post(
        "/api/v1/grade",
        content='{\n  "version": 1,,\n}',
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 422
    assert response.json()["errors"][0]["line"] == 2


def test_other_media_types_are_415(api):
    """Plain text is refused with 415 and the accepted types."""
    response = api.post("/api/v1/grade", content="x", headers={"content-type": "text/plain"})
    assert response.status_code == 415
    assert "application/yaml" in response.json()["error"]["detail"]


def test_simulate_needs_a_known_scenario(api):
    """The fixture course has no scenarios: 404 naming the choice."""
    response = api.post("/api/v1/simulate?scenario=peak", json={"version": 1})
    assert response.status_code == 404
    assert "No scenario 'peak'" in response.json()["error"]["detail"]


def test_openapi_documents_both_endpoints_and_body_types(api):
    """Both routes, their response models and the three body types are in the OpenAPI docs."""
    spec = api.get("/api/openapi.json").json()
    grade = spec["paths"]["/api/v1/grade"]["post"]
    assert set(grade["requestBody"]["content"]) == {
        "application/json",
        "application/yaml",
        "multipart/form-data",
    }
    ok = grade["responses"]["200"]["content"]["application/json"]["schema"]
    assert ok == {"$ref": "#/components/schemas/GradeResult"}
    assert "/api/v1/simulate" in spec["paths"]
    assert {"Design", "GradeResult", "SimulationResult"} <= set(spec["components"]["schemas"])


SIMULATED = Path(__file__).resolve().parents[1] / "grading" / "fixtures" / "simulated"


@pytest.fixture
def simulated_api(make_settings):
    app = create_app(make_settings(steps_dir=SIMULATED))
    with TestClient(app) as client:
        yield client


def test_simulate_returns_the_cli_json(simulated_api):
    """POST /api/v1/simulate equals `designlab simulate --json` for the same design and seed."""
    design_file = SIMULATED / "designs" / "reference.yaml"
    files = {"design": ("design.yaml", design_file.read_bytes(), "application/yaml")}
    response = simulated_api.post("/api/v1/simulate?scenario=tiny&seed=5", files=files)
    assert response.status_code == 200
    outcome = CliRunner().invoke(
        cli,
        ["simulate", str(design_file), "--scenario", "tiny", "--seed", "5", "--json"]
        + ["--steps-dir", str(SIMULATED)],
    )
    assert outcome.exit_code == 0, outcome.output
    assert response.json() == json.loads(outcome.stdout)
    assert response.json()["cost"]["budget_usd"] == 85000


def test_grade_with_scenarios_matches_the_cli(simulated_api):
    """A course whose steps simulate: the API's grade equals the CLI's JSON."""
    design_file = SIMULATED / "designs" / "reference.yaml"
    response = simulated_api.post(
        "/api/v1/grade", content=design_file.read_bytes(), headers={"content-type": "text/yaml"}
    )
    outcome = CliRunner().invoke(
        cli, ["grade", str(design_file), "--format", "json", "--steps-dir", str(SIMULATED)]
    )
    assert outcome.exit_code == 0, outcome.output
    assert response.json() == json.loads(outcome.stdout)
    assert response.json()["steps"][0]["metrics"]["arrivals"] > 0


def test_grade_judges_each_step_on_its_step_design_like_the_cli(simulated_api, tmp_path):
    """Step 1 judges the learner's step-1 answers with the course's values for step 2's fields
    (8 partitions here is a step-2 answer): the API simulates that step design, as the CLI and
    the browser do, not the whole design for every step."""
    design = yaml.safe_load((SIMULATED / "designs" / "reference.yaml").read_text())
    design["event_log"]["partitions"] = 8
    design["consumers"]["agent"]["instances"] = 4
    design_file = tmp_path / "design.yaml"
    design_file.write_text(yaml.safe_dump(design))
    response = simulated_api.post(
        "/api/v1/grade", content=design_file.read_bytes(), headers={"content-type": "text/yaml"}
    )
    outcome = CliRunner().invoke(
        cli, ["grade", str(design_file), "--format", "json", "--steps-dir", str(SIMULATED)]
    )
    assert outcome.exit_code in (0, 1), outcome.output
    expected = json.loads(outcome.stdout)
    assert response.json() == expected
    step1, step2 = expected["steps"]
    assert step1["metrics"] != step2["metrics"]  # two designs were judged, not one


@pytest.mark.parametrize(
    ("content_type", "body", "line"),
    [
        ("application/yaml", "version: 1\nevent_log:\n  partitions: 96\n  partitions: 24\n", 4),
        ("application/json", '{"version": 1,\n "event_log": {"partitions": 96,\n'
                             ' "partitions": 24}}', 3),
    ],
    ids=["yaml", "json"],
)  # fmt: skip
def test_case6_a_duplicate_key_in_a_yaml_or_json_body_is_422_naming_line_and_key(
    simulated_api, content_type, body, line
):
    """A JSON object with a repeated name is refused like a YAML mapping: the last one no
    longer wins silently."""
    for url in ("/api/v1/grade", "/api/v1/simulate?scenario=tiny"):
        response = simulated_api.post(url, content=body, headers={"content-type": content_type})
        assert response.status_code == 422, (url, response.text)
        errors = response.json().get("errors") or response.json()["error"]["fields"]
        [error] = errors
        assert (error["line"], error["field"]) == (line, "event_log.partitions")
        assert "duplicate key 'partitions'" in error["message"]


JSON_BODY = {"content-type": "application/json"}


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ("[" * 941 + "]" * 941, "nested deeper than"),
        ('{"version": 1, "name": ' + "[" * 5000 + "]" * 5000 + "}", "nested deeper than"),
        ('{"version": 1, "event_log": {"partitions": ' + "1" * 4301 + "}}", "4301 characters"),
    ],
    ids=["941-deep", "5000-deep-in-a-field", "4301-digit-integer"],
)
def test_case12_a_json_body_too_deep_or_with_a_huge_integer_is_422_not_500(
    simulated_api, body, says
):
    for url in ("/api/v1/grade", "/api/v1/simulate?scenario=tiny"):
        response = simulated_api.post(url, content=body, headers=JSON_BODY)
        assert response.status_code == 422, (url, response.text)
        assert says in response.text


def _post_reference(client: TestClient, path: str = "/api/v1/grade"):
    design_file = SIMULATED / "designs" / "reference.yaml"
    return client.post(
        path, content=design_file.read_bytes(), headers={"content-type": "application/yaml"}
    )


def test_case_4_a_dead_worker_is_503_with_retry_after_and_no_grade(simulated_api, monkeypatch):
    """The pool's worker died: nothing was graded, so no 200 with status error: 503, Retry-After,
    a message saying to try again."""
    from app.errors import Unavailable

    async def died(design, scenario, seed, client="address:unknown"):
        raise Unavailable("The worker process stopped. Nothing was counted; try again in 2 s.",
                          retry_after_seconds=2)  # fmt: skip

    monkeypatch.setattr("app.simpool.simulate", died)
    response = _post_reference(simulated_api)
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "2"
    body = response.json()
    assert body["status"] == "error" and "try again" in body["message"]
    simulated = _post_reference(simulated_api, "/api/v1/simulate?scenario=tiny")
    assert simulated.status_code == 503 and simulated.headers["Retry-After"] == "2"


def test_case_5_an_internal_failure_is_503_with_retry_after_never_200_error(
    simulated_api, monkeypatch
):
    async def broken(design, scenario, seed, client="address:unknown"):
        raise RuntimeError("a bug in the simulator")

    monkeypatch.setattr("app.simpool.simulate", broken)
    response = _post_reference(simulated_api)
    assert response.status_code == 503
    assert int(response.headers["Retry-After"]) >= 1
    body = response.json()
    assert body["status"] == "error"
    assert "try again" in body["message"]
    assert any("a bug in the simulator" in s["message"] for s in body["steps"])


def test_case_5_a_step_over_the_size_budget_is_422_and_every_error_has_a_message(make_settings):
    app = create_app(make_settings(steps_dir=SIMULATED, sim_max_step_events=10))
    with TestClient(app) as client:
        response = _post_reference(client)
    assert response.status_code == 422
    body = response.json()
    assert body["status"] == "error"
    errored = [s for s in body["steps"] if s["status"] == "error"]
    assert errored
    for step in errored:
        assert "too large to simulate" in step["message"]
        for check in step["checks"]:
            assert check["status"] != "error" or check["message"]
    assert {e["field"] for e in body["errors"]} >= {"duration_seconds"}


def test_case_5_openapi_lists_every_status_each_route_returns(api):
    spec = api.get("/api/openapi.json").json()
    grade = spec["paths"]["/api/v1/grade"]["post"]["responses"]
    simulate = spec["paths"]["/api/v1/simulate"]["post"]["responses"]
    assert set(grade) == {"200", "413", "415", "422", "429", "503"}
    assert set(simulate) == {"200", "404", "413", "415", "422", "429", "503"}
    assert "Retry-After" in grade["503"]["headers"]
    assert grade["503"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/GradeResult"
    }
