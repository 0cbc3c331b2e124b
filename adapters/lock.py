"""The poller lock: one poller per state root, and who holds it."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from pathlib import Path
from typing import Any

from adapters.files.private import open_private


class LockHeld(Exception):
    """Another process holds the lock; `holder` is what it wrote (pid, started)."""

    def __init__(self, path: Path, holder: dict[str, Any]) -> None:
        super().__init__(f"{path} is held by pid {holder.get('pid', '?')} (started {holder.get('started', '?')})")
        self.holder = holder


# what the holder writes is padded to this size at once: later notes overwrite blocks the file
# already owns, so they land on a full disk too
NOTE_BYTES = 4096


class PollerLock:
    """An advisory `flock` on `<state.root>/poller.lock`: released by the kernel when the
    holder dies, so a crashed poller never leaves a stale lock behind. The file says who holds it
    (and, noted in place while its cycles fail, why), for `status`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def acquire(self, info: dict[str, Any]) -> None:
        fd = open_private(self.path, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise LockHeld(self.path, self.holder() or {}) from None
        try:
            # in place, then cut to size: the blocks an earlier holder left are reused (a full disk)
            os.pwrite(fd, _padded(info), 0)
            os.ftruncate(fd, NOTE_BYTES)
            os.fsync(fd)
        except OSError:
            os.close(fd)
            raise
        self._fd = fd

    def note(self, info: dict[str, Any]) -> None:
        """Rewrite what the lock says, in place; a note that cannot be written (or is too long)
        leaves the last one."""
        if self._fd is None:
            return
        with contextlib.suppress(OSError, ValueError):
            os.pwrite(self._fd, _padded(info), 0)

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):  # blanked, not cut: the next holder reuses its blocks
                os.pwrite(self._fd, b" " * NOTE_BYTES, 0)
            os.close(self._fd)
            self._fd = None

    def holder(self) -> dict[str, Any] | None:
        """What the running poller wrote, or None when no poller holds the lock."""
        if not self.path.exists():
            return None
        fd = os.open(self.path, os.O_RDONLY)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return _said(self.path)
            fcntl.flock(fd, fcntl.LOCK_UN)
            return None
        finally:
            os.close(fd)


def _padded(info: dict[str, Any]) -> bytes:
    text = json.dumps(info, ensure_ascii=True).encode()
    if len(text) > NOTE_BYTES:
        raise ValueError(f"a lock note of {len(text)} bytes does not fit in {NOTE_BYTES}")
    return text.ljust(NOTE_BYTES)  # json reads the trailing spaces as nothing


def _said(path: Path) -> dict[str, Any]:
    """What the holder wrote; read again when a note was being rewritten at that instant."""
    for _ in range(3):
        with contextlib.suppress(ValueError):
            return dict(json.loads(path.read_text() or "{}"))
    return {}
