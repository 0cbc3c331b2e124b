"""The spawn prompt's private file: written 0600, removed by the pane's wrapper, swept if orphaned."""

from __future__ import annotations

import os
from contextlib import suppress
from pathlib import Path

PREFIX = "the-loop-prompt-"
STALE_SECONDS = 3600.0  # no harness takes an hour to read its first prompt


def write_prompt_file(data: bytes) -> Path:
    import tempfile  # only a spawn writes one: a command that only looks starts without it

    fd, name = tempfile.mkstemp(prefix=PREFIX)  # 0600, a name no one else holds
    with os.fdopen(fd, "wb") as file:
        file.write(data)
    path = Path(name)
    sweep_orphans(fresh=path)
    return path


def sweep_orphans(*, fresh: Path) -> None:
    """Remove our prompt files no pane ever read (its server died before the wrapper ran).

    The fresh file's mtime is 'now' as the filesystem sees it, so no clock is read here.
    """
    cutoff = fresh.stat().st_mtime - STALE_SECONDS
    for old in fresh.parent.glob(PREFIX + "*"):
        with suppress(OSError):  # gone meanwhile, or another user's
            stat = old.stat()
            if stat.st_mtime < cutoff and stat.st_uid == os.getuid():
                old.unlink()
