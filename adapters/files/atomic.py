"""Files written whole: a temporary file beside the target, then a rename over it, so a reader
sees the old content or the new, never half, and a write that fails leaves the old file as it was."""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

PRIVATE = 0o600


def write_whole(
    path: Path, data: str | bytes, *, mode: int = PRIVATE, fsync: bool = True, prefix: str = "", suffix: str = ""
) -> None:
    """Put `data` (text as UTF-8) at `path` whole. The temporary file is made in `path`'s folder,
    named `prefix` (by default `.NAME.`), a random part and `suffix`, with `mode` cut by the umask as
    `open` does (0600 unless asked); with `fsync`, its content is on disk before the rename, so a
    crash leaves the old file or the new. `OSError` when it cannot be written; the temporary file
    is then removed."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, temporary = _create(path, mode, prefix or f".{path.name}.", suffix)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(raw)
            if fsync:
                file.flush()
                os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _create(path: Path, mode: int, prefix: str, suffix: str) -> tuple[int, Path]:
    while True:
        temporary = path.with_name(f"{prefix}{secrets.token_hex(6)}{suffix}")
        try:  # a name no other writer holds: never a file (or a link) already there
            return os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode), temporary
        except FileExistsError:
            continue
