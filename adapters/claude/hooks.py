"""The hooks the-loop hands Claude Code (`claude --settings <file>`): its receipt channel.

Each hook is the receipt line every harness's hooks run (`adapters.agents.receipt_line`); the
receipt folders read what they write (`adapters.receipts.hook_json`). The user's own settings are
never touched: `--settings` adds a layer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from adapters.agents.receipt_line import DECISION, EXPIRED, TAKEN, hook_command, record
from adapters.files.atomic import write_whole
from domain.model import ReceiptChannel

SETTINGS_FILE = "hooks.settings.json"
TICK_SECONDS = 0.2
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


def asking_command(folder: Path, wait_seconds: float) -> str:
    """The PermissionRequest hook: its receipt, then up to `wait_seconds` for the daemon's decision
    (an answer from the item), printed whole to Claude Code. Nothing printed leaves the dialog to
    the pane, as without the-loop; Claude Code draws the dialog while the hook waits, so someone
    attached can still answer it (tests/claude/test_loop_asks.py)."""
    ticks = max(1, round(wait_seconds / TICK_SECONDS))
    wait = (
        f"n=0; while [ $n -lt {ticks} ]; do "
        f'if mv "$f{DECISION}" "$f{TAKEN}" 2>/dev/null; then cat "$f{TAKEN}"; exit 0; fi; '
        f"sleep {TICK_SECONDS}; n=$((n+1)); done; "
        f': > "$f{EXPIRED}"'
    )
    return f"{record(folder)} || exit 0; {wait}; exit 0"


def settings(folder: Path, *, ask_wait_seconds: float = 0.0) -> dict[str, Any]:
    """Claude Code settings holding only the-loop's hooks."""
    entry = [{"hooks": [{"type": "command", "command": hook_command(folder)}]}]
    tool_entry = [{"matcher": "*", "hooks": [{"type": "command", "command": hook_command(folder)}]}]
    hooks = {event: tool_entry if event in _TOOL_EVENTS else entry for event in EVENTS}
    if ask_wait_seconds > 0:
        # its own timeout, longer than its wait: Claude Code's default would cut it short
        asking = {"type": "command", "command": asking_command(folder, ask_wait_seconds)}
        hooks["PermissionRequest"] = [{"matcher": "*", "hooks": [asking | {"timeout": int(ask_wait_seconds) + 30}]}]
    return {"hooks": hooks}


def receipt_channel(folder: Path, *, ask_wait_seconds: float = 0.0) -> ReceiptChannel:
    """A Claude Code spawn's channel: its settings file in the spawn's receipt folder, handed to it
    by `--settings`. `ask_wait_seconds`: how long its PermissionRequest hook waits for an answer."""
    path = folder / SETTINGS_FILE
    text = json.dumps(settings(folder, ask_wait_seconds=ask_wait_seconds), indent=2)
    write_whole(path, text, mode=0o666, fsync=False)  # its temporary name is never a receipt's
    return ReceiptChannel(args=("--settings", str(path)))
