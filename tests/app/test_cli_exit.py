"""The console script's end (app.cli.run): grade, lint and simulate end without the interpreter's
teardown, with every byte written and the command's own exit code; other commands exit as usual."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import EXIT_WITHOUT_TEARDOWN, run

ROOT = Path(__file__).resolve().parents[2]


def _designlab(*argv: str, **kwargs) -> subprocess.CompletedProcess[bytes]:
    """``python -m app.cli ARGV`` (the console script's ``run``) in the repository's root."""
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *argv],
        capture_output=True,
        cwd=ROOT,
        timeout=300,
        **kwargs,
    )


def test_a_grade_writes_its_whole_report_before_the_process_ends():
    """The JSON report (about 150 kB, more than a pipe holds at once) arrives whole and parses:
    the flush before ``os._exit`` lost nothing; exit code 0 for a passing design."""
    done = _designlab("grade", "steps/designs/reference.yaml", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert len(done.stdout) > 65536
    report = json.loads(done.stdout)
    assert (report["status"], report["points"]) == ("pass", report["max_points"])


def test_a_bad_design_keeps_its_exit_code_and_message(tmp_path):
    """Bad input: exit code 2 and the message naming the file and line, as without ``run``."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nevent_log: [\n")
    done = _designlab("grade", str(bad))
    assert done.returncode == 2
    assert f"{bad}:2: (file): YAML syntax" in done.stdout.decode()


def test_a_reader_that_closed_the_pipe_gives_141_from_the_console_script():
    """``designlab grade ... | head -c0``: the reader is gone before the first write; the process
    ends with the shell's SIGPIPE status and says nothing of an internal error."""
    writer = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "grade", "steps/designs/reference.yaml"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    assert writer.stdout is not None
    writer.stdout.close()
    _, stderr = writer.communicate(timeout=300)
    assert b"internal error" not in stderr and b"Traceback" not in stderr, stderr
    assert writer.returncode == 141


def test_other_commands_exit_through_the_interpreter(monkeypatch, capsys):
    """``designlab --version`` is not one of them: ``run`` raises the command's SystemExit (the
    interpreter's usual exit, its teardown and atexit handlers) instead of ending the process."""
    assert "--version" not in EXIT_WITHOUT_TEARDOWN
    monkeypatch.setattr(sys, "argv", ["designlab", "--version"])
    with pytest.raises(SystemExit) as exited:
        run()
    assert exited.value.code in (0, None)
    assert capsys.readouterr().out.startswith("designlab ")
