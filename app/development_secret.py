"""The session key of a development server started without SECRET_KEY: random, made once, kept
in a file only its owner can read, and reused on every start so sessions survive a restart."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

KEY_BYTES = 32
"""Random bytes in a generated key (256 bits), written as 64 hex digits."""


def development_secret_key(path: Path) -> str:
    """The key kept at ``path``, made first (64 hex digits, file mode 0600) when it does not exist.

    A new key is written whole to a private temporary file, then hard-linked to ``path``, which
    fails when ``path`` exists: two processes starting at once end up with the same key (the
    loser of the race reads the winner's, never a half-written file). Raises OSError when the
    folder cannot be created or the file cannot be read or written, and ValueError when the file
    holds fewer than 32 characters (a truncated or hand-edited key is not used).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        draft = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
        descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(descriptor, "w", encoding="ascii") as key_file:
                key_file.write(secrets.token_hex(KEY_BYTES) + "\n")
            os.link(draft, path)
        except FileExistsError:
            pass
        finally:
            draft.unlink()
    key = path.read_text(encoding="ascii").strip()
    if len(key) < KEY_BYTES:
        raise ValueError(f"{path}: holds no usable key; delete it to make a new one")
    return key
