"""`CodexTrust`: record a folder as trusted in Codex's user configuration, and nothing else.

Codex 0.169 opens "Trust this folder?" in a git folder it has not seen, and skips it when
`$CODEX_HOME/config.toml` (`~/.codex/config.toml`) holds `[projects."<dir>"] trust_level =
"trusted"` (pinned: tests/codex/test_codex_facts.py); a `-c` override of the same key does not.
The file is the user's, and TOML: it is re-read under the same lock beside it as Claude Code's
trust uses, the record is **appended** as a table of its own (every other byte kept as it was),
and the file is replaced whole (temp file, fsync, rename/exchange) only if it is still as read
(`adapters.agents.folder_trust`). A folder the user marked otherwise (`untrusted`) is refused,
never rewritten; so is a file that is not TOML.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from adapters.agents.agent_config import codex_config_file
from adapters.agents.folder_trust import FolderTrust, text_of
from domain.errors import TrustError

TRUSTED = "trusted"
SETTLE_SECONDS = 0.5


class CodexTrust(FolderTrust):
    """A running Codex rewrites `config.toml` too (it persists keys of its own at start, seen:
    `[tui]`), without this lock: a record made just before such a write can be lost. So a new
    record is read back `settle_seconds` later and written again when it is gone, a few times at
    most, as for Claude Code."""

    settle = SETTLE_SECONDS

    def _default_path(self) -> Path:
        return codex_config_file(os.environ)

    def _changed(self, path: Path, content: bytes | None, directory: str) -> str | None:
        """The record appended unless it is there."""
        text = text_of(path, content)
        level = _level(path, text, directory)
        if level == TRUSTED:
            return None
        if level is not None:
            raise TrustError(f"{path}: projects[{directory!r}] is {level!r}, not touching it")
        changed = text + _record(text, directory)
        if _level(path, changed, directory) != TRUSTED:  # `projects` written inline: not appendable
            raise TrustError(f"{path}: cannot add projects[{directory!r}] as a table; not touching the file")
        return changed


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
