"""One watchdog per state root: the one that keeps `watchdog.lock` (an flock, let go with its process).
A watchdog started for another generation (another tmux server, settings or code version) than the
one keeping the lock replaces it: the one left by an earlier daemon is asked to leave, then made to."""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

LOCK_NAME, PID_NAME = "watchdog.lock", "watchdog.pid"
MODULE = "adapters.watchdog"
_PAUSE = 0.05
_TRIES = 20  # a moment: one of the same generation that just decided to leave lets go at once
_EVICT_AFTER = 60  # one of another generation leaves at its next look (at most a second) ...
_GIVE_UP = 100  # ... or after SIGTERM (an older code that does not read the generation)


@dataclass(frozen=True, slots=True)
class Holder:
    pid: int
    argv: list[str]  # its arguments after `-m adapters.watchdog`


def holder(state_root: Path) -> Holder | None:
    """The watchdog that recorded itself as keeping the lock, if that process is still a watchdog."""
    try:
        pid = int((state_root / PID_NAME).read_text(encoding="ascii").split()[0])
        words = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]  # each ends in NUL
    except (OSError, ValueError, IndexError):
        return None
    if MODULE not in words:
        return None  # the pid now names another program
    return Holder(pid, words[words.index(MODULE) + 1 :])


def serving(state_root: Path, argv: Sequence[str]) -> bool:
    """Whether a watchdog started with exactly `argv` keeps this state root's lock."""
    if not _held(state_root):
        return False
    found = holder(state_root)
    return found is not None and found.argv == list(argv)


def _held(state_root: Path) -> bool:
    try:
        with (state_root / LOCK_NAME).open("ab") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            return False  # closing it lets go at once
    except OSError:
        return True  # nothing to learn: not a reason to start another


def locked(state_root: Path, argv: Sequence[str]) -> IO[bytes] | None:
    """The state root's watchdog lock for a watchdog started with `argv`; None when one of the same
    generation keeps it (it reads the deadlines the new daemon records)."""
    handle = (state_root / LOCK_NAME).open("ab")
    for attempt in range(_GIVE_UP):
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            found = holder(state_root)
            same = found is not None and found.argv == list(argv)
            if same and attempt >= _TRIES:
                break
            if found is not None and not same and attempt == _EVICT_AFTER and _ours(found, argv):
                with contextlib.suppress(OSError):
                    os.kill(found.pid, signal.SIGTERM)
            time.sleep(_PAUSE)
            continue
        return handle
    handle.close()
    return None


def _ours(found: Holder, argv: Sequence[str]) -> bool:
    """Whether `found` watches the same state root: the only watchdog this one may replace."""

    def root(words: Sequence[str]) -> str | None:
        return words[words.index("--state-root") + 1] if "--state-root" in words[:-1] else None

    return found.pid != os.getpid() and root(found.argv) is not None and root(found.argv) == root(argv)
