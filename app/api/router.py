"""The JSON API: ``POST /api/v1/grade`` and ``POST /api/v1/simulate`` (documented in OpenAPI).

Both take a design as a JSON body (``application/json``: the design file's fields as JSON), as
YAML (``application/yaml``) or as an uploaded file (``multipart/form-data``, field ``design``),
and answer with the same JSON as the CLI for the same design and seed: ``designlab grade
--format json`` (contract 3) and ``designlab simulate --json`` (a SimulationResult with its cost).
A JSON body is read as YAML 1.2 by the design file's reader, so an object with a repeated name is
refused like a mapping with a repeated key, naming its line.
The simulations run in the app's process pool (app/simpool.py) within its bounds and its fair
share per client (the client's address); a request waits for them on the event loop, holding no
thread, and grades in a worker thread once they are done (milliseconds).

A grade is 200 only when it is a verdict (status pass or fail). A design refused for its own
fields (too large to simulate, too slow because of a named field) is 422 with those fields in
``errors``; a grade that could not run through no fault of the design (a dead worker, a busy
pool, an internal error) is 503 with ``Retry-After``: try again, nothing was graded.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Query, Request
from fastapi.responses import Response
from starlette.datastructures import UploadFile

from app import simpool
from app.deps import MaterialDep
from app.errors import BadInput, DesignlabError, NotFound, Unavailable
from app.grading.grader import (
    CourseMaterial,
    error_result,
    grade,
    input_problems,
    run_scenario,
)
from app.grading.result import GradeResult, InputProblem
from app.step_runs import Runs, wanted_runs
from simulator.design import Design
from simulator.errors import FieldError, InputFileError
from simulator.files import MAX_DEPTH, MAX_FILE_BYTES, load_model
from simulator.result import SimulationResult

log = logging.getLogger(__name__)

RETRY_AFTER_INTERNAL_SECONDS = 30
"""Retry-After of a grade that could not run because of designlab's own error (logged)."""


JSON_TYPES = ("application/json",)
YAML_TYPES = ("application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml")
FORM_FIELD = "design"

router = APIRouter(prefix="/api/v1", tags=["grading"])


class UnsupportedMediaType(DesignlabError):
    """The request body is neither JSON, YAML nor a multipart upload."""

    status = 415
    title = "Unsupported media type"


def client_of(request: Request) -> str:
    """The API client a request is from, for fairness (app.simpool.client_key): its address."""
    return simpool.client_key(None, request.client.host if request.client else None)


async def simulations(
    design: Design, material: CourseMaterial, seed: int | None, client: str
) -> Runs:
    """Every simulation grading the whole course reads for ``design`` (each step's own design
    under each scenario it names, and the design itself under the scenario its month is priced
    with: app.step_runs.wanted_runs), run in the pool for ``client`` one after the other: each
    result, or what it raised (an Unavailable included) in ``failures``."""
    runs = Runs()
    for key, (judged, name) in wanted_runs(design, material, material.loaded.steps).items():
        scenario = material.loaded.scenarios[name]
        run_seed = scenario.seed if seed is None else seed
        try:
            runs.results[key] = await simpool.simulate(judged, scenario, run_seed, client)
        except Exception as exc:  # the grader decides: an error check, or no grade
            runs.failures[key] = exc
    return runs


_DESIGN_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "description": "The design: JSON with the design file's fields, YAML text, or an upload.",
        "content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/Design"}},
            "application/yaml": {"schema": {"type": "string", "description": "design.yaml text"}},
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": [FORM_FIELD],
                    "properties": {
                        FORM_FIELD: {
                            "type": "string",
                            "format": "binary",
                            "description": "design.yaml",
                        }
                    },
                }
            },
        },
    }
}


async def _design_text(request: Request) -> tuple[str, str]:
    """The body's design text and a file name for error messages; raises BadInput or 415."""
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media == "multipart/form-data":
        form = await request.form(max_files=1, max_fields=4)
        upload = form.get(FORM_FIELD)
        if not isinstance(upload, UploadFile):
            raise BadInput(
                f"Upload the design as the form field {FORM_FIELD!r}.",
                [FieldError("request", None, FORM_FIELD, "missing file")],
            )
        data = await upload.read(MAX_FILE_BYTES + 1)
        name = upload.filename or "design.yaml"
    elif media in JSON_TYPES or media in YAML_TYPES:
        data = await request.body()
        name = "design.json" if media in JSON_TYPES else "design.yaml"
    else:
        raise UnsupportedMediaType(
            f"Send the design as application/json, application/yaml or multipart/form-data "
            f"(got {media or 'no content type'})."
        )
    if len(data) > MAX_FILE_BYTES:
        raise BadInput(
            f"The design is larger than {MAX_FILE_BYTES:,} bytes.",
            [FieldError(name, None, "", "file too large")],
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(
            "The design is not UTF-8 text.", [FieldError(name, None, "", str(exc))]
        ) from exc
    if media in JSON_TYPES:
        _check_json(text, name)
    return text, name


def _check_json(text: str, name: str) -> None:
    """Raise BadInput unless ``text`` is JSON. Numbers are not converted here (a 4,301-digit
    integer is refused with its field by the design's reader, not by Python's int limit), and
    nesting deep enough to exhaust the JSON decoder's recursion is refused as such. The text is
    then read as YAML 1.2 (JSON is a subset), so a duplicate key in an object is refused with
    its line and field, as in a design file."""
    too_deep = BadInput(
        f"The JSON body is nested deeper than a design's {MAX_DEPTH} levels.",
        [FieldError(name, None, "", f"nesting deeper than {MAX_DEPTH} levels")],
    )
    if _json_depth(text) > MAX_DEPTH + 1:
        raise too_deep
    try:
        json.loads(text, parse_int=str, parse_float=str)
    except json.JSONDecodeError as exc:
        raise BadInput(
            "The body is not valid JSON.", [FieldError(name, exc.lineno, "", exc.msg)]
        ) from exc
    except RecursionError as exc:  # not reached after the depth check; kept as a backstop
        raise too_deep from exc


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_JSON_BRACKET = re.compile(r"[\[\]{}]")


def _json_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in JSON text (brackets inside strings do not
    count), found without recursion."""
    depth = deepest = 0
    for bracket in _JSON_BRACKET.finditer(_JSON_STRING.sub("", text)):
        depth += 1 if bracket.group() in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def _parse_design(text: str, name: str) -> Design:
    """A Design from JSON or YAML text (JSON is read as YAML to keep line numbers)."""
    return load_model(Design, text, name)


SeedQuery = Annotated[
    int | None,
    Query(ge=0, le=2**63 - 1, description="Seed for every scenario; default: each scenario's own."),
]


@router.get(
    "/designs/default",
    response_model=Design,
    summary="The design a learner starts from",
    description="Every field at its default: a plausible design that is not yet durable. "
    "Its schema is the design file's (contract 1).",
)
def default_design() -> Design:
    """The default design."""
    return Design()


@router.post(
    "/grade",
    response_model=GradeResult,
    summary="Grade a design against every step",
    description="Runs every step's checks and scenarios for the design, like `designlab grade "
    "DESIGN --format json`. 200 with status pass or fail; 422 with status error and `errors` "
    "naming the file, line and field when the design is not valid or a simulation was refused "
    "for the design's own fields; 503 with status error and `Retry-After` when the grade could "
    "not run through no fault of the design (try again: nothing was graded).",
    responses={
        200: {"description": "A verdict: status pass or fail."},
        413: {"description": "The request body is larger than MAX_BODY_BYTES."},
        415: {"description": "The body is not JSON, YAML or a multipart upload."},
        422: {
            "model": GradeResult,
            "description": "The design is not valid, or too large or too slow to simulate "
            "because of the fields `errors` names (status error).",
        },
        429: {"description": "Too many gradings from this client; `Retry-After` says when."},
        503: {
            "model": GradeResult,
            "description": "The grade could not run now (a simulation worker died, the "
            "simulator is busy, an internal error was logged); status error, nothing graded. "
            "`Retry-After` says when to try again.",
            "headers": {"Retry-After": {"schema": {"type": "integer"}}},
        },
    },
    openapi_extra=_DESIGN_BODY,
)
async def grade_design(request: Request, material: MaterialDep, seed: SeedQuery = None) -> Response:
    """Grade the posted design; the body is the result of contract 3."""
    try:
        text, name = await _design_text(request)
        design = _parse_design(text, name)
    except InputFileError as exc:
        problems = input_problems(exc)
        message = f"{problems[0].file} is not a valid design: {len(problems)} problem(s)"
        result = error_result(problems, message, seed=seed, material=material)
        return _json(result, 422)
    except BadInput as exc:
        problems = [InputProblem.from_field_error(f) for f in exc.fields]
        return _json(error_result(problems, exc.detail, seed=seed, material=material), 422)
    done = await simulations(design, material, seed, client_of(request))
    try:
        result = await anyio.to_thread.run_sync(
            lambda: grade(design, material, seed=seed, simulate=done.simulate(material))
        )
    except Unavailable as exc:
        log.warning("grade answered 503: %s", exc.detail)
        return _json(error_result([], exc.detail, seed=seed, material=material), 503, exc)
    if result.errors:
        return _json(result, 422)
    if result.status == "error":
        log.error("grade could not run: %s", result.message)
        message = (
            f"The grade could not run because of an error of designlab's own; it has been "
            f"logged. Nothing was graded; try again in {RETRY_AFTER_INTERNAL_SECONDS} s. "
            f"{result.message}"
        )
        busy = Unavailable(message, retry_after_seconds=RETRY_AFTER_INTERNAL_SECONDS)
        return _json(result.model_copy(update={"message": message}), 503, busy)
    return _json(result, 200)


@router.post(
    "/simulate",
    response_model=SimulationResult,
    summary="Simulate a design under one of the course's scenarios",
    description="Like `designlab simulate DESIGN --scenario NAME --json`: metrics, time series "
    "and the monthly cost against the course budget.",
    responses={
        200: {"description": "The simulation's result with its monthly cost."},
        404: {"description": "No scenario of that name in the course."},
        413: {"description": "The request body is larger than MAX_BODY_BYTES."},
        415: {"description": "The body is not JSON, YAML or a multipart upload."},
        422: {
            "description": "The design is not valid, or too large or too slow to simulate; "
            "`fields` names the file, line and field."
        },
        429: {"description": "Too many simulations from this client; `Retry-After` says when."},
        503: {
            "description": "The simulation could not run now (its worker died, the simulator "
            "is busy); nothing was counted. `Retry-After` says when to try again.",
            "headers": {"Retry-After": {"schema": {"type": "integer"}}},
        },
    },
    openapi_extra=_DESIGN_BODY,
)
async def simulate_design(
    request: Request,
    material: MaterialDep,
    scenario: Annotated[str, Query(description="A scenario of the course, e.g. peak.")],
    seed: SeedQuery = None,
) -> Response:
    """Simulate the posted design; the body is a SimulationResult with its cost."""
    chosen = material.loaded.scenarios.get(scenario)
    if chosen is None:
        names = ", ".join(sorted(material.loaded.scenarios)) or "none"
        raise NotFound(f"No scenario {scenario!r} in the course; choose one of: {names}.")
    text, name = await _design_text(request)
    try:
        design = _parse_design(text, name)
    except InputFileError as exc:
        raise BadInput("The design is not valid.", exc.errors) from exc
    run_seed = chosen.seed if seed is None else seed
    simulated = await simpool.simulate(design, chosen, run_seed, client_of(request))
    result = run_scenario(design, chosen, run_seed, material, lambda *_: simulated)
    return Response(result.model_dump_json(), media_type="application/json")


def _json(result: GradeResult, status: int, unavailable: Unavailable | None = None) -> Response:
    """The result serialised exactly as the CLI's JSON (same model, same serialiser); with
    ``unavailable``, its ``Retry-After``."""
    response = Response(result.model_dump_json(), status_code=status, media_type="application/json")
    if unavailable is not None:
        response.headers["Retry-After"] = str(unavailable.retry_after_seconds)
    return response
