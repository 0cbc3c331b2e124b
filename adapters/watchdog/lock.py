"""One watchdog per state root: the one that keeps `watchdog.lock` (an flock, let go with its process)."""

from __future__ import annotations

import fcntl
import time
from pathlib import Path
from typing import IO

LOCK_NAME = "watchdog.lock"
_TRIES, _PAUSE = 20, 0.05


def running(state_root: Path) -> bool:
    """Whether a watchdog keeps this state root's lock (a moment's probe of it)."""
    try:
        with (state_root / LOCK_NAME).open("ab") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            return False  # closing it lets go at once
    except OSError:
        return True  # nothing to learn: not a reason to start another


def locked(state_root: Path) -> IO[bytes] | None:
    """The state root's watchdog lock; None when another watchdog keeps it (it reads the deadline
    the new daemon records). A moment of retries: one that just decided to leave lets go at once."""
    handle = (state_root / LOCK_NAME).open("ab")
    for _ in range(_TRIES):
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            time.sleep(_PAUSE)
            continue
        return handle
    handle.close()
    return None
