"""The results block lists the checks that did not pass first: failed, then not exercised, then
could not run, then passed; declared order within each."""

from __future__ import annotations

from app.grading.result import CheckResult
from app.web.results import failed_first


def _check(id_: str, status: str) -> CheckResult:
    return CheckResult.model_validate(
        {
            "id": id_,
            "title": id_,
            "kind": "simulated",
            "status": status,
            "points": 0,
            "max_points": 1,
            "message": "",
            "explanation": "",
        }
    )


def test_not_exercised_checks_come_with_the_failures_before_the_passes():
    checks = [
        _check("a", "pass"),
        _check("b", "not_exercised"),
        _check("c", "error"),
        _check("d", "fail"),
        _check("e", "not_exercised"),
    ]
    assert [c.id for c in failed_first(checks)] == ["d", "b", "e", "c", "a"]
