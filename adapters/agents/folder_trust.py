"""A folder recorded as trusted in a harness's own user configuration file, which is the user's and
which other writers change too (the running harness, another the-loop process).

The file is re-read under a lock right before each change (the harness's own where it has one,
else ours beside the file), every byte the change does not need is kept, and it is replaced whole
(a temp file in the same folder, fsync, then an atomic exchange) only if it is still as read. A
running harness may write over the file from the copy it holds without the lock: so a new record is
read back `settle` seconds later and written again when it is gone, a few times at most. What the
file holds and how a record is added is each harness's own (`FolderTrust._changed`).
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from domain.errors import TrustError
from domain.ports import TrustPort

ROUNDS = 3
ATTEMPTS = 50  # writes abandoned because another writer changed the file first, before giving up


class FolderTrust(TrustPort):
    """The writing, checking and settling; a subclass says where its file is and what to write."""

    settle: ClassVar[float]  # seconds for the harness's own writer to have written over a new record
    overwriter: ClassVar[str] = "another writer"  # who is named when a record keeps being written over

    def __init__(
        self,
        path: Path | None = None,
        *,
        settle_seconds: float | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._path = path or self._default_path()
        self._settle = self.settle if settle_seconds is None else settle_seconds
        self._sleep = sleep

    def _default_path(self) -> Path:
        raise NotImplementedError

    def _locked(self, path: Path) -> AbstractContextManager[None]:
        """The lock every change of the file (at `path`, resolved) is made under: our own beside it
        by default; a harness that locks its file itself has it taken its way."""
        return _own_lock(path)

    def _changed(self, path: Path, content: bytes | None, directory: str) -> str | None:
        """The file's new text with the record added to `content` (None: the file is absent); None
        when the record is there already. `TrustError` for a file it must not touch."""
        raise NotImplementedError

    def trust(self, directory: str, *, hooks: str = "") -> bool:
        """Record `directory`; whether it was written (False: it was there already). `hooks` is not
        read: each subclass writes its own harness's file (the container picks by `hooks`)."""
        # a harness looks its working directory up as the kernel gives it: symlinks resolved
        directory = os.path.realpath(directory)
        if self._recorded(directory) or not self._record(directory):
            return False
        for _ in range(ROUNDS):
            self._sleep(self._settle)
            if not self._record(directory):
                return True  # still there: every running harness has read it by now
        raise TrustError(
            f"{self._path}: {self.overwriter} wrote over projects[{directory!r}] {ROUNDS} times; not trusted"
        )

    def _recorded(self, directory: str) -> bool:
        """Whether the record is there already, read without the lock: the lock orders changes, and
        this changes nothing. A running harness may hold it a while (Claude Code at its start and on
        its way out) when a wake resumes an agent in a folder trusted long before: that need not
        wait. A read finds a version some writer left (the-loop and Claude Code replace the file
        whole), or at worst the start of one being written: a record found there is in it. A file
        missing, unreadable or without the record is left to the locked path."""
        path = self._path.resolve()
        try:
            return self._changed(path, _Seen.of(path).content, directory) is None
        except TrustError:
            return False

    def _record(self, directory: str) -> bool:
        """Write the record unless it is there; whether it was written."""
        path = self._path.resolve()  # a symlinked dotfile stays a symlink: its target is replaced
        with self._locked(path):
            return rewrite(
                path,
                lambda content: self._changed(path, content, directory),
                sleep=self._sleep,
                what=f"projects[{directory!r}] not trusted",
            )


def text_of(path: Path, content: bytes | None) -> str:
    """A configuration file's text as read under the lock ("" when there is none); an undecodable
    one is not touched."""
    if content is None:
        return ""
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TrustError(f"{path}: cannot read: {exc}") from exc


def rewrite(
    path: Path, change: Callable[[bytes | None], str | None], *, sleep: Callable[[float], None], what: str
) -> bool:
    """Replace the file at `path` (resolved, its lock held) with `change(its bytes)` (None: absent)
    unless that is None; whether it was written. Retried while another writer changes it first;
    `TrustError` saying `what` was not done once every attempt lost."""
    for attempt in range(ATTEMPTS):
        seen = _Seen.of(path)
        changed = change(seen.content)
        if changed is None:
            return False
        if _replace(path, changed, unless_changed_from=seen):
            return True
        sleep(0.001 * (attempt % 8))  # another writer is busy: let it finish
    raise TrustError(f"{path}: another writer changed the file before each of {ATTEMPTS} writes; {what}")


@dataclass(frozen=True, slots=True)
class _Seen:
    """What the file was when read: which file (a rename makes another) and what it held."""

    identity: tuple[int, int, int, int] | None  # device, inode, mtime in ns, size; None: absent
    content: bytes | None

    @classmethod
    def of(cls, path: Path) -> _Seen:
        try:
            with open(path, "rb") as file:
                stat = os.fstat(file.fileno())
                content = file.read()
        except FileNotFoundError:
            return cls(None, None)
        except OSError as exc:
            raise TrustError(f"{path}: cannot read: {exc}") from exc
        return cls(_identity(stat), content)

    def still(self, path: Path) -> bool:
        """Whether the file is still the one read, holding the same bytes."""
        try:
            with open(path, "rb") as file:
                same = self.content == file.read()
        except FileNotFoundError:
            return self.identity is None
        except OSError:
            return False
        # the cheap check last: it leaves the shortest window before the rename
        return same and self.identity == _identity_of(path)


def _identity(stat: os.stat_result) -> tuple[int, int, int, int]:
    return (stat.st_dev, stat.st_ino, stat.st_mtime_ns, stat.st_size)


def _identity_of(path: Path) -> tuple[int, int, int, int] | None:
    try:
        return _identity(os.stat(path))
    except OSError:
        return None


@contextmanager
def _own_lock(path: Path) -> Iterator[None]:
    """Our own lock beside the file: two the-loop processes never interleave their changes."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(path.with_name(path.name + ".the-loop.lock"), "a")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise TrustError(f"{path}: cannot lock: {exc}") from exc
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        handle.close()


def _replace(path: Path, text: str, *, unless_changed_from: _Seen) -> bool:
    """Replace the file with `text` if it is still as seen; whether it was replaced."""
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = 0o600
    try:
        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                file.write(text)
                file.flush()
                os.fsync(file.fileno())
            os.chmod(temp, mode)
            # everything slow is done: only the comparison stands between it and the rename
            if not unless_changed_from.still(path) or not _swap_in(Path(temp), path, unless_changed_from):
                Path(temp).unlink(missing_ok=True)
                return False
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise TrustError(f"{path}: cannot write: {exc}") from exc
    return True


def _swap_in(temp: Path, path: Path, seen: _Seen) -> bool:
    """Put `temp` at `path`; False (and `path` as the other writer left it) when the file there was
    no longer the one seen. An exchange rather than a rename keeps the file it displaces, so a
    change another writer renamed in after the check is put back instead of lost."""
    if seen.identity is None:
        try:
            os.link(temp, path)  # fails where a file appeared since: never replaces one
        except FileExistsError:
            return False
        temp.unlink()
        return True
    if not _exchange(temp, path):
        os.replace(temp, path)  # no exchange on this system: the comparison above is all there is
        return True
    if _identity_of(temp) == seen.identity:
        temp.unlink()  # what we displaced is what we read: nothing was lost
        return True
    ours = _identity_of(path)
    if ours is not None and _identity_of(temp) != ours and _exchange(temp, path):
        pass  # the other writer's file is back in place; ours is at `temp`, removed by the caller
    return False


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_LIBC = ctypes.CDLL(None, use_errno=True)


def _exchange(first: Path, second: Path) -> bool:
    """Swap two names atomically (Linux `renameat2`); False where the system cannot."""
    renameat2 = getattr(_LIBC, "renameat2", None)
    if renameat2 is None:
        return False
    if renameat2(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE) == 0:
        return True
    error = ctypes.get_errno()
    if error in {errno.ENOSYS, errno.EINVAL, errno.ENOTSUP}:
        return False
    raise OSError(error, os.strerror(error), str(second))
