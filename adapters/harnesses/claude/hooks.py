"""The hooks the-loop hands Claude Code (`claude --settings <file>`): its receipt channel.

Each hook is the receipt line every harness's hooks run (`adapters.agents.receipt_line`); the
receipt folders read what they write (`adapters.receipts.hook_json`). The user's own settings are
never touched: `--settings` adds a layer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from adapters.agents.receipt_line import asking_command, asking_timeout, hook_command
from adapters.files.atomic import write_whole
from domain.model import ReceiptChannel

SETTINGS_FILE = "hooks.settings.json"
EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
    "StopFailure",
    "Notification",
    "SessionEnd",
)
# matched per tool: "*" is every tool
_TOOL_EVENTS = {"PreToolUse", "PermissionRequest", "PostToolUse", "PostToolUseFailure"}


def settings(folder: Path, *, ask_wait_seconds: float = 0.0) -> dict[str, Any]:
    """Claude Code settings holding only the-loop's hooks."""
    entry = [{"hooks": [{"type": "command", "command": hook_command(folder)}]}]
    tool_entry = [{"matcher": "*", "hooks": [{"type": "command", "command": hook_command(folder)}]}]
    hooks = {event: tool_entry if event in _TOOL_EVENTS else entry for event in EVENTS}
    if ask_wait_seconds > 0:
        asking = {"type": "command", "command": asking_command(folder, ask_wait_seconds)}
        hooks["PermissionRequest"] = [
            {"matcher": "*", "hooks": [asking | {"timeout": asking_timeout(ask_wait_seconds)}]}
        ]
    return {"hooks": hooks}


def receipt_channel(folder: Path, *, ask_wait_seconds: float = 0.0) -> ReceiptChannel:
    """A Claude Code spawn's channel: its settings file in the spawn's receipt folder, handed to it
    by `--settings`. `ask_wait_seconds`: how long its PermissionRequest hook waits for an answer."""
    path = folder / SETTINGS_FILE
    text = json.dumps(settings(folder, ask_wait_seconds=ask_wait_seconds), indent=2)
    write_whole(path, text, mode=0o666, fsync=False)  # its temporary name is never a receipt's
    return ReceiptChannel(args=("--settings", str(path)))
