"""A lock per repository, across threads and processes: `flock` on a file beside its clone."""

from __future__ import annotations

import fcntl
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from adapters.files.private import open_private
from domain.errors import WorkspaceError

POLL_SECONDS = 0.05
_held = threading.local()  # the lock files this thread holds: taken again, they are held already


@contextmanager
def repository_lock(path: Path, *, timeout: float) -> Iterator[None]:
    """Hold `path` exclusively; each call opens its own descriptor, so two threads of one process
    exclude each other too. The kernel releases it when the holder dies: never stale. A thread
    that holds it already (a respawn holding it around prepare and spawn) just goes on."""
    held: set[Path] = _held.__dict__.setdefault("paths", set())
    key = path.absolute()
    if key in held:
        yield
        return
    fd = open_private(path, os.O_RDWR)
    try:
        _acquire(fd, path, timeout)
        held.add(key)
        yield
    finally:
        held.discard(key)
        os.close(fd)  # closing the descriptor releases the lock


def _acquire(fd: int, path: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise WorkspaceError(f"{path} stayed locked by another process for {timeout:g} s") from None
            time.sleep(POLL_SECONDS)
