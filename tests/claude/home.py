"""Claude Code offline: the pinned binary, a HOME that needs no login, and the environment it runs in."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# any long key in the API's shape: Claude checks its form, the stand-in takes any
API_KEY = "sk-ant-api03-" + "x" * 80 + "A" * 20


@dataclass
class ClaudeHome:
    """A HOME in which Claude starts without onboarding, login or key approval, and trusts the
    `trusted` folders (and every folder inside them) from the start: written before any Claude
    runs, because a running Claude may write its older copy of the file over a later change
    (docs/claude-code.md)."""

    path: Path
    trusted: tuple[Path, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)  # more keys for ~/.claude.json

    def __post_init__(self) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        if not self.config_file.exists():
            approved = {"approved": [API_KEY[-20:]], "rejected": []}
            projects = {str(f.resolve()): {"hasTrustDialogAccepted": True} for f in self.trusted}
            base = {"hasCompletedOnboarding": True, "customApiKeyResponses": approved, "projects": projects}
            self._write(base | self.extra)

    @property
    def config_file(self) -> Path:
        return self.path / ".claude.json"

    def config(self) -> dict[str, Any]:
        return dict(json.loads(self.config_file.read_text(encoding="utf-8")))

    def _write(self, config: dict[str, Any]) -> None:
        part = self.config_file.with_suffix(".part")
        part.write_text(json.dumps(config, indent=2), encoding="utf-8")
        part.replace(self.config_file)  # Claude may read it at any moment: never half-written


def claude_env(home: ClaudeHome, base_url: str) -> dict[str, str]:
    """Everything Claude's process needs, and nothing of the caller's environment."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home.path),
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "ANTHROPIC_API_KEY": API_KEY,
        "ANTHROPIC_BASE_URL": base_url,
        # its auto-updater installs a newer version machine-wide (npm -g) while it runs
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        # else it fetches its official plugin marketplace (git over https and ssh) at start
        "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL": "1",
    }
