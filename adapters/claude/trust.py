"""`ClaudeTrust`: record a folder as trusted in Claude Code's user configuration, and nothing else.

Claude Code reads `projects.<absolute dir>.hasTrustDialogAccepted` from `~/.claude.json`
(`$CLAUDE_CONFIG_DIR/.claude.json` when that is set). The file is the user's: it is re-read under a
lock right before the change, every other key is kept as it was, and it is replaced whole
(a temp file in the same folder, fsync, rename) so no reader ever sees half of it. A file that is
not a JSON object is refused, never rewritten.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from domain.errors import TrustError
from domain.ports import TrustPort
from domain.receipts import ReceiptMode

KEY = "hasTrustDialogAccepted"
SETTLE_SECONDS = 1.0  # Claude Code's file watcher polls about once a second
ROUNDS = 3
ATTEMPTS = 50  # writes abandoned because another writer changed the file first, before giving up


def default_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    folder = env.get("CLAUDE_CONFIG_DIR")
    return Path(folder) / ".claude.json" if folder else Path.home() / ".claude.json"


class ClaudeTrust(TrustPort):
    """A running Claude Code writes the copy of the file it holds, refreshed by a watcher: a change
    made just before such a write is lost (seen for a trust written as another Claude started, 3 of
    10 within 0.5 s of its start). So a new record is read back `settle_seconds` later and written
    again when it is gone, a few times at most."""

    def __init__(
        self,
        path: Path | None = None,
        *,
        settle_seconds: float = SETTLE_SECONDS,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._path = path or default_path()
        self._settle = settle_seconds
        self._sleep = sleep

    def trust(self, directory: str, *, kind: ReceiptMode = ReceiptMode.CLAUDE) -> bool:
        """`kind` is not read: this writes Claude Code's file only (the container picks by kind)."""
        # Claude Code looks its working directory up as the kernel gives it: symlinks resolved
        directory = os.path.realpath(directory)
        if not self._record(directory):
            return False
        for _ in range(ROUNDS):
            self._sleep(self._settle)
            if not self._record(directory):
                return True  # still there: every running Claude has read it by now
        raise TrustError(
            f"{self._path}: a running Claude Code wrote over projects[{directory!r}] {ROUNDS} times; not trusted"
        )

    def _record(self, directory: str) -> bool:
        """Write the record unless it is there; whether it was written."""
        path = self._path.resolve()  # a symlinked dotfile stays a symlink: its target is replaced
        with _locked(path):
            for attempt in range(ATTEMPTS):
                seen = _Seen.of(path)
                config = _parsed(path, seen.content)
                if not _add(path, config, directory):
                    return False
                if _replace(path, config, unless_changed_from=seen):
                    return True

                self._sleep(0.001 * (attempt % 8))  # another writer is busy: let it finish
        raise TrustError(
            f"{path}: another writer changed the file before each of {ATTEMPTS} writes; projects[{directory!r}] "
            "not trusted"
        )


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


def _add(path: Path, config: dict[str, Any], directory: str) -> bool:
    """Add the record to `config`; False when it is there already."""
    projects = config.setdefault("projects", {})
    if not isinstance(projects, dict):
        raise TrustError(f"{path}: 'projects' is not an object; not touching the file")
    entry = projects.setdefault(directory, {})
    if not isinstance(entry, dict):
        raise TrustError(f"{path}: projects[{directory!r}] is not an object; not touching the file")
    if entry.get(KEY) is True:
        return False
    entry[KEY] = True
    return True


@contextmanager
def _locked(path: Path) -> Iterator[None]:
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


def _parsed(path: Path, content: bytes | None) -> dict[str, Any]:
    if content is None:
        return {}
    try:
        config = json.loads(content.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise TrustError(f"{path}: cannot read: {exc}") from exc
    except ValueError as exc:
        raise TrustError(f"{path}: not JSON ({exc}); not touching the file") from exc
    if not isinstance(config, dict):
        raise TrustError(f"{path}: not a JSON object; not touching the file")
    return config


def _replace(path: Path, config: dict[str, Any], *, unless_changed_from: _Seen) -> bool:
    """Replace the file with `config` if it is still as seen; whether it was replaced."""
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = 0o600
    try:
        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                json.dump(config, file, indent=2)
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
