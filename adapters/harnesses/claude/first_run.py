"""`ClaudeFirstRun`: record Claude Code's first run as done in its user configuration, for a daemon
whose first run cannot finish by hand (`the-loop doctor --fix`, with the operator's consent).

What a first run records, and enough for Claude Code to start with no question (every test in
`tests/claude/` starts it so, `tests/claude/home.py`): `hasCompletedOnboarding: true` and, for an API
key, the key's last 20 characters under `customApiKeyResponses.approved`. The file is the user's and
a running Claude Code's: changed under Claude Code's own lock, every other key kept, replaced whole
(`adapters.agents.folder_trust.rewrite`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from adapters.agents.folder_trust import rewrite
from adapters.harnesses.claude.config_lock import claude_config_lock
from adapters.harnesses.claude.trust import parsed
from domain.errors import TrustError

ONBOARDED = "hasCompletedOnboarding"
RESPONSES = "customApiKeyResponses"


class ClaudeFirstRun:
    """Implements `app.cli.doctor_fix.FirstRunWriter` (structurally: adapters do not import app).

    Failure modes: `TrustError` naming the file — not a JSON object, unreadable, unwritable, or
    changed by another writer before each attempt.
    """

    def __init__(self, *, sleep: Callable[[float], None] = time.sleep) -> None:
        self._sleep = sleep

    def complete(self, path: Path, *, approve: str) -> tuple[str, ...]:
        written: list[str] = []

        def change(content: bytes | None) -> str | None:
            config = parsed(path, content)
            written[:] = _record(path, config, approve)
            return json.dumps(config, indent=2) if written else None

        with claude_config_lock(path, sleep=self._sleep):  # beside the name Claude uses
            rewrite(path.resolve(), change, sleep=self._sleep, what="the first run not recorded")
        return tuple(written)


def _record(path: Path, config: dict[str, Any], approve: str) -> list[str]:
    """Add what is missing to `config`; the keys changed."""
    changed = []
    if config.get(ONBOARDED) is not True:
        config[ONBOARDED] = True
        changed.append(ONBOARDED)
    if approve:
        responses = config.setdefault(RESPONSES, {})
        if not isinstance(responses, dict):
            raise TrustError(f"{path}: {RESPONSES!r} is not an object; not touching the file")
        approved, rejected = responses.setdefault("approved", []), responses.setdefault("rejected", [])
        if not isinstance(approved, list) or not isinstance(rejected, list):
            raise TrustError(f"{path}: {RESPONSES}'s lists are not lists; not touching the file")
        if approve not in approved or approve in rejected:
            approved[:] = [*(a for a in approved if a != approve), approve]
            rejected[:] = [r for r in rejected if r != approve]
            changed.append(f"{RESPONSES}.approved")
    return changed
