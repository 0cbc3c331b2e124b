"""The poller lock: one poller per state root, and who holds it."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from pathlib import Path
from typing import Any


class LockHeld(Exception):
    """Another process holds the lock; `holder` is what it wrote (pid, started)."""

    def __init__(self, path: Path, holder: dict[str, Any]) -> None:
        super().__init__(f"{path} is held by pid {holder.get('pid', '?')} (started {holder.get('started', '?')})")
        self.holder = holder


class PollerLock:
    """An advisory `flock` on `<state.root>/poller.lock`: released by the kernel when the
    holder dies, so a crashed poller never leaves a stale lock behind."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def acquire(self, info: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise LockHeld(self.path, self.holder() or {}) from None
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps(info).encode())
        os.fsync(fd)
        self._fd = fd

    def update(self, info: dict[str, Any]) -> None:
        """Rewrite what the holder says of itself (only while holding the lock)."""
        if self._fd is None:
            return
        data = json.dumps(info).encode()
        os.pwrite(self._fd, data, 0)
        os.ftruncate(self._fd, len(data))

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
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
                text = Path(self.path).read_text() or "{}"
                with contextlib.suppress(ValueError):
                    return dict(json.loads(text))
                return {}
            fcntl.flock(fd, fcntl.LOCK_UN)
            return None
        finally:
            os.close(fd)
