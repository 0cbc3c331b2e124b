"""`CopilotTrust`: record a folder as trusted in Copilot CLI's user configuration, and nothing else.

Copilot CLI 1.0.102 opens "Confirm folder trust" in a folder it has not seen, before any hook runs,
and skips it when `trustedFolders` in `$COPILOT_HOME/config.json` (`~/.copilot/config.json`) names
the folder (pinned: tests/copilot/test_copilot_facts.py). The file is the user's: JSON after
comment lines of Copilot's own (`//`), which are kept, as is every other key; the folder is added
to the list under the lock beside the file, and the file replaced whole only if it is still as
read (`adapters.agents.folder_trust`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from adapters.agents.folder_trust import FolderTrust, text_of
from domain.errors import TrustError

SETTLE_SECONDS = 0.5


class CopilotTrust(FolderTrust):
    """A running Copilot writes the file too (its own keys): a new record is read back
    `settle_seconds` later and written again when it is gone, as for the others."""

    settle = SETTLE_SECONDS

    def _default_path(self) -> Path:
        home = os.environ.get("COPILOT_HOME") or str(Path(os.environ.get("HOME", "~")) / ".copilot")
        return Path(home).expanduser() / "config.json"

    def _changed(self, path: Path, content: bytes | None, directory: str) -> str | None:
        """The folder added to `trustedFolders` unless it is there; the comment lines kept."""
        text = text_of(path, content)
        comments = [line for line in text.splitlines() if line.lstrip().startswith("//")]
        body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//")).strip()
        try:
            config = json.loads(body) if body else {}
        except ValueError as exc:
            raise TrustError(f"{path}: not JSON ({exc}); not touching the file") from exc
        if not isinstance(config, dict):
            raise TrustError(f"{path}: not a JSON object; not touching the file")
        trusted = config.get("trustedFolders", [])
        if not isinstance(trusted, list):
            raise TrustError(f"{path}: 'trustedFolders' is not a list; not touching the file")
        if directory in trusted:
            return None
        config["trustedFolders"] = [*trusted, directory]
        return "".join(f"{line}\n" for line in comments) + json.dumps(config, indent=2) + "\n"
