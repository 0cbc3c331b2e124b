"""Claude Code hooks recorded as files: the settings that install them, and a reader that waits on them."""

from __future__ import annotations

import json
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "Stop",
    "StopFailure",
    "Notification",
    "PermissionRequest",
    "PreToolUse",
    "PostToolUse",
    "SessionEnd",
)


def hook_command(folder: Path) -> str:
    """A tiny sh command writing the hook's stdin (one JSON object) to a new file in `folder`,
    named by the time it ran: no Python start-up per hook, and never a half-written file. Then it
    prints `folder/reply` when there is one: what the hook answers Claude (its decision)."""
    where = shlex.quote(str(folder))
    record = f'f={where}/"$(date +%s%N)-$$"; cat > "$f.part" && mv "$f.part" "$f.json"'
    return f"{record}; cat {where}/reply 2>/dev/null; exit 0"


def write_hook_settings(settings: Path, folder: Path, events: tuple[str, ...] = EVENTS) -> Path:
    """A `claude --settings` file whose hooks record each event in `folder/<event>/`."""
    hooks: dict[str, Any] = {}
    for event in events:
        (folder / event).mkdir(parents=True, exist_ok=True)
        hooks[event] = [{"hooks": [{"type": "command", "command": hook_command(folder / event)}]}]
    settings.write_text(json.dumps({"hooks": hooks}, indent=2), encoding="utf-8")
    return settings


@dataclass(frozen=True, slots=True)
class Hook:
    """One hook run: its event, when it started (ns since the epoch), and the JSON it was given."""

    event: str
    at_ns: int
    data: dict[str, Any]

    def __getitem__(self, key: str) -> Any:
        return self.data[key]


class HookLog:
    """The hooks Claude ran, read back from the files the hook command wrote."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.settings = write_hook_settings(folder / "settings.json", folder)

    def all(self, session_id: str | None = None, *, since_ns: int = 0) -> list[Hook]:
        """The hooks of `session_id` (every session's when None) run at or after `since_ns`, in order."""
        hooks = [self._read(event, path) for event in EVENTS for path in (self.folder / event).glob("*.json")]
        hooks = [h for h in hooks if h.at_ns >= since_ns and session_id in (None, h.data.get("session_id"))]
        return sorted(hooks, key=lambda h: h.at_ns)

    def reply(self, event: str, answer: dict[str, Any] | None) -> None:
        """What every later `event` hook prints to Claude (None: nothing, as by default)."""
        path = self.folder / event / "reply"
        if answer is None:
            path.unlink(missing_ok=True)
        else:
            path.write_text(json.dumps(answer), encoding="utf-8")

    def of(self, event: str, session_id: str | None = None, *, since_ns: int = 0) -> list[Hook]:
        return [h for h in self.all(session_id, since_ns=since_ns) if h.event == event]

    def wait(
        self,
        event: str | tuple[str, ...],
        session_id: str | None = None,
        *,
        since_ns: int = 0,
        where: Callable[[Hook], bool] = lambda _: True,
        timeout: float = 30.0,
    ) -> Hook:
        """The first `event` hook (or one of several) since `since_ns` matching `where`;
        AssertionError after `timeout` seconds."""
        events = (event,) if isinstance(event, str) else event
        deadline = time.monotonic() + timeout
        while True:
            found = [h for h in self.all(session_id, since_ns=since_ns) if h.event in events and where(h)]
            if found:
                return found[0]
            if time.monotonic() > deadline:
                seen = [h.event for h in self.all(session_id, since_ns=since_ns)]
                raise AssertionError(f"no {event} hook within {timeout}s; hooks seen: {seen}")
            time.sleep(0.02)

    @staticmethod
    def _read(event: str, path: Path) -> Hook:
        return Hook(event, int(path.stem.split("-")[0]), json.loads(path.read_text(encoding="utf-8")))
