"""`ClaudeTrust`: record a folder as trusted in Claude Code's user configuration, and nothing else.

Claude Code reads `projects.<absolute dir>.hasTrustDialogAccepted` from `~/.claude.json`
(`$CLAUDE_CONFIG_DIR/.claude.json` when that is set). The file is the user's: it is re-read under
Claude Code's own lock (`adapters.harnesses.claude.config_lock`) right before the change, every other key is
kept as it was, and it is replaced whole (a temp file in the same folder, fsync, rename) so no
reader ever sees half of it (`adapters.agents.folder_trust`). A file that is not a JSON object is
refused, never rewritten.
"""

from __future__ import annotations

import json
import os
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from adapters.agents.agent_config import claude_config_file
from adapters.agents.folder_trust import ATTEMPTS, ROUNDS, FolderTrust
from adapters.harnesses.claude.config_lock import claude_config_lock
from domain.errors import TrustError

__all__ = ["ATTEMPTS", "KEY", "ROUNDS", "SETTLE_SECONDS", "ClaudeTrust", "parsed"]

KEY = "hasTrustDialogAccepted"
SETTLE_SECONDS = 1.0  # Claude Code's file watcher polls about once a second


class ClaudeTrust(FolderTrust):
    """A running Claude Code rewrites the file under its lock, re-reading it there: taking the same
    lock keeps every change of both. On its way out, and when it found the lock held too long, it
    writes without the lock, from a copy it may have read before our change (seen for a trust
    written as another Claude started, 3 of 10 within 0.5 s of its start). So a new record is read
    back `settle_seconds` later and written again when it is gone, a few times at most."""

    settle = SETTLE_SECONDS
    overwriter = "a running Claude Code"

    def _default_path(self) -> Path:
        return claude_config_file(os.environ)

    def _locked(self, path: Path) -> AbstractContextManager[None]:
        return claude_config_lock(self._path, sleep=self._sleep)  # beside the name Claude uses

    def _changed(self, path: Path, content: bytes | None, directory: str) -> str | None:
        config = parsed(path, content)
        return json.dumps(config, indent=2) if _add(path, config, directory) else None


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


def parsed(path: Path, content: bytes | None) -> dict[str, Any]:
    """The file's JSON object ({} when absent); `TrustError` for one that must not be touched."""
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
