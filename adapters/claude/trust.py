"""`ClaudeTrust`: record a folder as trusted in Claude Code's user configuration, and nothing else.

Claude Code reads `projects.<absolute dir>.hasTrustDialogAccepted` from `~/.claude.json`
(`$CLAUDE_CONFIG_DIR/.claude.json` when that is set). The file is the user's: it is re-read under a
lock right before the change, every other key is kept as it was, and it is replaced whole
(a temp file in the same folder, fsync, rename) so no reader ever sees half of it. A file that is
not a JSON object is refused, never rewritten.
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from domain.errors import TrustError
from domain.ports import TrustPort

KEY = "hasTrustDialogAccepted"
SETTLE_SECONDS = 1.0  # Claude Code's file watcher polls about once a second
ROUNDS = 3


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

    def trust(self, directory: str) -> bool:
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
            config = _read(path)
            projects = config.setdefault("projects", {})
            if not isinstance(projects, dict):
                raise TrustError(f"{path}: 'projects' is not an object; not touching the file")
            entry = projects.setdefault(directory, {})
            if not isinstance(entry, dict):
                raise TrustError(f"{path}: projects[{directory!r}] is not an object; not touching the file")
            if entry.get(KEY) is True:
                return False
            entry[KEY] = True
            _replace(path, config)
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


def _read(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise TrustError(f"{path}: cannot read: {exc}") from exc
    try:
        config = json.loads(text)
    except ValueError as exc:
        raise TrustError(f"{path}: not JSON ({exc}); not touching the file") from exc
    if not isinstance(config, dict):
        raise TrustError(f"{path}: not a JSON object; not touching the file")
    return config


def _replace(path: Path, config: dict[str, Any]) -> None:
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
            os.replace(temp, path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise TrustError(f"{path}: cannot write: {exc}") from exc
