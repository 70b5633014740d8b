"""What a user may do: the account roles, free of the database so the command line can name them
without loading it (``designlab create-user --role``). app.models stores them in the users table."""

from __future__ import annotations

from enum import StrEnum


class Role(StrEnum):
    """What a user may do: learners take the course; instructors also see course health."""

    learner = "learner"
    instructor = "instructor"
