"""Grades as CSV: one row per learner with per-step points, the total and first/last activity.

The instructor dashboard's "Export CSV" and ``designlab export`` both write ``grades_csv``.
Columns: ``learner_id``, ``email`` (empty for a guest), one column per step named by its id in
course order (points of the learner's latest attempt), ``total`` (the points that stand: a step
to re-run counts nothing until it is run again, as in the learner's score so far),
``max_total``, then ``first_activity`` and ``last_activity`` as ISO 8601 UTC
(``2026-11-29T08:00:00Z``; empty when the learner has done nothing yet), ``steps_passed``, and
``steps_to_rerun`` (steps whose latest points are from a run of an earlier design, or of the
step's checks before an instructor changed them), ``steps_unavailable`` (the ids of the steps
that do not load, a course error, separated by spaces: each learner's last run of them stands as
recorded and counts in ``total``, and ``max_total`` counts their points as still readable in
their files, app.instructor.class_progress.ClassTable.step_points), and ``learner``: the name the
class page shows, the email or ``guest N`` for a guest learner (who has no email: ``email`` stays
empty, and N is ``learner_id``). Columns added later go at the end, so the earlier ones keep their
positions.

Every cell is safe to open in a spreadsheet (OWASP, "CSV Injection"): a cell starting with
``=``, ``+``, ``-``, ``@``, a tab or a carriage return, which a spreadsheet would run as a
formula, gets a leading single quote, so it is shown as the text it is.
"""

from __future__ import annotations

import csv
import io
from datetime import datetime

from app.instructor.class_progress import ClassTable

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a cell as a formula (OWASP's list)."""


def spreadsheet_safe(value: str | int) -> str | int:
    """``value`` as a CSV cell a spreadsheet shows as text: a string starting with one of
    FORMULA_PREFIXES gets a leading ``'``; anything else is returned unchanged."""
    text = str(value)
    return "'" + text if text.startswith(FORMULA_PREFIXES) else value


def _moment(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value is not None else ""


def header(table: ClassTable) -> list[str]:
    """The CSV's column names for ``table``'s course."""
    steps = [step.slug for step in table.steps]
    return [
        "learner_id",
        "email",
        *steps,
        "total",
        "max_total",
        "first_activity",
        "last_activity",
        "steps_passed",
        "steps_to_rerun",
        "steps_unavailable",
        "learner",
    ]


def rows(table: ClassTable) -> list[list[str | int]]:
    """One CSV row per learner of ``table``, in the table's order."""
    unavailable = " ".join(step.slug for step in table.unavailable)
    return [
        [
            row.user_id,
            row.email or "",
            *(cell.points for cell in row.cells),
            row.total,
            table.max_total,
            _moment(row.first_activity),
            _moment(row.last_activity),
            row.passed,
            row.to_rerun,
            unavailable,
            row.name,
        ]
        for row in table.rows
    ]


def grades_csv(table: ClassTable) -> str:
    """The whole CSV (header first, CRLF line ends as RFC 4180 has them), every cell passed
    through ``spreadsheet_safe``."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([spreadsheet_safe(cell) for cell in header(table)])
    for row in rows(table):
        writer.writerow([spreadsheet_safe(cell) for cell in row])
    return out.getvalue()
