"""The container image runs as an unprivileged user and carries no secret (read from the
Dockerfile: the test suite does not build images)."""

from __future__ import annotations

import re
from pathlib import Path

DOCKERFILE = Path(__file__).resolve().parents[2] / "Dockerfile"


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of the final stage, continuation lines joined."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    lines = [s.strip() for s in text.splitlines() if s.strip() and not s.startswith("#")]
    parsed = [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in lines]
    last_from = max(i for i, (op, _) in enumerate(parsed) if op == "FROM")
    return parsed[last_from:]


def test_the_final_stage_switches_to_a_non_root_user_before_it_runs():
    steps = instructions()
    users = [(i, args.split(":")[0].strip()) for i, (op, args) in enumerate(steps) if op == "USER"]
    assert users, "the image never leaves root"
    index, user = users[-1]
    assert user not in ("root", "0")
    runs = [i for i, (op, _) in enumerate(steps) if op == "RUN"]
    assert all(i < index for i in runs), "a RUN after USER would need root again"
    assert any(op in ("CMD", "ENTRYPOINT") for op, _ in steps[index:])


def test_the_user_is_created_with_a_non_zero_uid():
    created = re.search(r"useradd\b[^\n]*--uid (\d+)[^\n]* (\w+)", DOCKERFILE.read_text())
    assert created and int(created.group(1)) >= 1000
    _, user = [(op, a) for op, a in instructions() if op == "USER"][-1]
    assert created.group(2) == user.split(":")[0].strip()


def test_no_secret_is_baked_into_the_image():
    env = " ".join(args for op, args in instructions() if op in ("ENV", "ARG"))
    assert "SECRET_KEY" not in env
    assert "PASSWORD" not in env.upper()
    assert "ENV=production" in env.replace(" ", "")  # so the shipped secret is refused at start
