"""`CodexTrust`: record a folder as trusted in Codex's user configuration, and nothing else.

Codex 0.169 opens "Trust this folder?" in a git folder it has not seen, and skips it when
`$CODEX_HOME/config.toml` (`~/.codex/config.toml`) holds `[projects."<dir>"] trust_level =
"trusted"` (pinned: tests/codex/test_codex_facts.py); a `-c` override of the same key does not.
The file is the user's, and TOML: it is re-read under the same lock beside it as Claude Code's
trust uses, the record is **appended** as a table of its own (every other byte kept as it was),
and the file is replaced whole (temp file, fsync, rename/exchange) only if it is still as read.
A folder the user marked otherwise (`untrusted`) is refused, never rewritten; so is a file that is
not TOML.
"""

from __future__ import annotations

import os
import tempfile
import time
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path

from adapters.claude.trust import ATTEMPTS, ROUNDS, _locked, _Seen, _swap_in
from domain.errors import TrustError
from domain.ports import TrustPort
from domain.receipts import ReceiptMode

TRUSTED = "trusted"
SETTLE_SECONDS = 0.5


def default_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    folder = env.get("CODEX_HOME")
    return Path(folder) / "config.toml" if folder else Path.home() / ".codex" / "config.toml"


class CodexTrust(TrustPort):
    """A running Codex rewrites `config.toml` too (it persists keys of its own at start, seen:
    `[tui]`), without this lock: a record made just before such a write can be lost. So a new
    record is read back `settle_seconds` later and written again when it is gone, a few times at
    most, as for Claude Code."""

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

    def trust(self, directory: str, *, kind: ReceiptMode = ReceiptMode.CODEX) -> bool:
        """`kind` is not read: this writes Codex's file only (the container picks by kind)."""
        directory = os.path.realpath(directory)
        if not self._record(directory):
            return False
        for _ in range(ROUNDS):
            self._sleep(self._settle)
            if not self._record(directory):
                return True
        raise TrustError(f"{self._path}: another writer wrote over projects[{directory!r}] {ROUNDS} times; not trusted")

    def _record(self, directory: str) -> bool:
        """Append the record unless it is there; whether it was written."""
        path = self._path.resolve()
        with _locked(path):
            for attempt in range(ATTEMPTS):
                seen = _Seen.of(path)
                text = _text(path, seen.content)
                level = _level(path, text, directory)
                if level == TRUSTED:
                    return False
                if level is not None:
                    raise TrustError(f"{path}: projects[{directory!r}] is {level!r}, not touching it")
                changed = text + _record(text, directory)
                if _level(path, changed, directory) != TRUSTED:  # `projects` written inline: not appendable
                    raise TrustError(f"{path}: cannot add projects[{directory!r}] as a table; not touching the file")
                if _replace(path, changed, unless_changed_from=seen):
                    return True
                self._sleep(0.001 * (attempt % 8))
        raise TrustError(f"{path}: another writer changed the file before each of {ATTEMPTS} writes; not trusted")


def _text(path: Path, content: bytes | None) -> str:
    if content is None:
        return ""
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TrustError(f"{path}: cannot read: {exc}") from exc


def _level(path: Path, text: str, directory: str) -> object:
    """The folder's `trust_level` now (None: no record)."""
    try:
        config = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TrustError(f"{path}: not TOML ({exc}); not touching the file") from exc
    projects = config.get("projects", {})
    if not isinstance(projects, dict):
        raise TrustError(f"{path}: 'projects' is not a table; not touching the file")
    entry = projects.get(directory)
    if entry is None:
        return None
    if not isinstance(entry, dict):
        raise TrustError(f"{path}: projects[{directory!r}] is not a table; not touching the file")
    return entry.get("trust_level", "unset")


def _record(text: str, directory: str) -> str:
    quoted = '"' + directory.replace("\\", "\\\\").replace('"', '\\"') + '"'
    lead = "" if not text or text.endswith("\n") else "\n"
    return f'{lead}\n[projects.{quoted}]\ntrust_level = "{TRUSTED}"\n'


def _replace(path: Path, text: str, *, unless_changed_from: _Seen) -> bool:
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
            if not unless_changed_from.still(path) or not _swap_in(Path(temp), path, unless_changed_from):
                Path(temp).unlink(missing_ok=True)
                return False
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise TrustError(f"{path}: cannot write: {exc}") from exc
    return True
