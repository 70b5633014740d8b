"""The CLI's commands, one module per command or group; app/cli.py registers them."""

from enum import IntEnum


class ExitCode(IntEnum):
    """Exit codes every designlab command uses."""

    OK = 0
    FINDINGS = 1
    """The command ran and found something wrong (a failed grade, lint errors, a stale file)."""
    BAD_INPUT = 2
    """Bad input or usage; the message names the file, line and field."""
    INTERNAL = 3
    """A bug in designlab."""
