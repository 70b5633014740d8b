"""docs/grading.md states the limits the file reader enforces (simulator/files.py)."""

from __future__ import annotations

from pathlib import Path

from simulator.files import MAX_DEPTH, MAX_FILE_BYTES, MAX_NUMBER_CHARS

DOC = Path(__file__).resolve().parents[2] / "docs" / "grading.md"


def test_case6_the_documented_file_limits_are_the_enforced_ones():
    text = " ".join(DOC.read_text().split())
    assert f"at most {MAX_FILE_BYTES:,} bytes per file" in text
    assert f"at most {MAX_DEPTH} levels of nesting" in text
    assert f"a number of at most {MAX_NUMBER_CHARS} characters" in text
    assert "duplicate key" in text and "YAML 1.2" in text
