"""The self-test's ``unjudged`` checks of a known-bad design (course.yaml): not exercised on some
seeds, passed on others; a fail is still a stray."""

from __future__ import annotations


def test_an_unjudged_check_counts_as_intended_only_when_not_exercised():
    """course.yaml's ``unjudged``: not exercised on some seeds, passed on others; a fail is
    still a stray (app.grading.selftest.failed_checks)."""
    from app.grading.result import GradeResult
    from app.grading.selftest import failed_checks

    def result(status: str) -> GradeResult:
        check = {
            "id": "crash-no-duplicate-effect", "title": "t", "kind": "simulated",
            "status": status, "points": 0, "max_points": 3, "message": "", "explanation": "",
        }  # fmt: skip
        step = {
            "id": "exactly-once-effects", "title": "t", "status": "fail", "points": 0,
            "max_points": 3, "scenario": None, "seed": None, "message": "", "checks": [check],
        }  # fmt: skip
        return GradeResult.model_validate(
            {"status": "fail", "score": 0, "points": 0, "max_points": 3, "seed": 1,
             "simulator_version": "x", "message": "", "steps": [step]}
        )  # fmt: skip

    unjudged = frozenset({"crash-no-duplicate-effect"})
    assert failed_checks(result("not_exercised"), set(), unjudged) == frozenset()
    assert failed_checks(result("not_exercised"), set()) == {"crash-no-duplicate-effect"}
    assert failed_checks(result("fail"), set(), unjudged) == {"crash-no-duplicate-effect"}
