"""The hooks the-loop hands Claude Code (`claude --settings <file>`), and how a hook's JSON reads.

Each hook is one tiny shell line, no interpreter start-up: it writes the JSON Claude Code gives it
on stdin to a file of its own and renames it into place, so a reader never sees half a receipt and
two hooks never interleave. The user's own settings are never touched: `--settings` adds a layer.
"""

from __future__ import annotations

import json
import shlex
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from domain.receipts import Receipt, ReceiptKind

SUFFIX = ".receipt"
EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "Stop",
    "StopFailure",
    "Notification",
    "SessionEnd",
)
_TOOL_EVENTS = {"PreToolUse", "PermissionRequest", "PostToolUse"}  # matched per tool: "*" is every tool
_BLOCKING = {"permission_prompt", "elicitation_dialog"}
_KINDS = {
    "SessionStart": ReceiptKind.READY,
    "UserPromptSubmit": ReceiptKind.PROMPT,
    # before any permission check: Claude Code may draw its dialog before PermissionRequest's
    # receipt is written, never before PreToolUse's (docs/claude-code.md)
    "PreToolUse": ReceiptKind.TOOL,
    # the dialog is open as this fires; the permission_prompt notification says so ~6 s later
    "PermissionRequest": ReceiptKind.BLOCKED,
    "PostToolUse": ReceiptKind.WORKING,
    "Stop": ReceiptKind.TURN_ENDED,
    "StopFailure": ReceiptKind.TURN_FAILED,
    "SessionEnd": ReceiptKind.ENDED,
}


def hook_command(folder: Path) -> str:
    """`date +%s%N` orders the files; `$$` keeps two hooks of one nanosecond apart. It always exits
    0: Claude Code reads a hook's exit status 2 as "block" (the prompt erased, the tool denied), and
    sh exits 2 when it cannot create the file (the folder gone): a receipt lost, never a prompt."""
    where = shlex.quote(str(folder))
    return f'umask 077; f={where}/"$(date +%s%N)-$$"; cat > "$f.part" && mv -f "$f.part" "$f{SUFFIX}"; exit 0'


def settings(folder: Path) -> dict[str, Any]:
    """Claude Code settings holding only the-loop's hooks."""
    entry = [{"hooks": [{"type": "command", "command": hook_command(folder)}]}]
    tool_entry = [{"matcher": "*", "hooks": [{"type": "command", "command": hook_command(folder)}]}]
    return {"hooks": {event: tool_entry if event in _TOOL_EVENTS else entry for event in EVENTS}}


def receipt_of(key: str, text: str) -> Receipt | None:
    """One receipt file read as a receipt; None for what says nothing the-loop acts on."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    event = _text(data, "hook_event_name")
    kind = _KINDS.get(event)
    if event == "Notification":
        kind = _notification(_text(data, "notification_type"))
    if kind is None:
        return None
    return Receipt(
        kind=kind,
        key=key,
        at=_written_at(key),
        conversation=_text(data, "session_id"),
        source=_text(data, "source"),
        prompt=_text(data, "prompt"),
        detail=_text(data, "error") or _text(data, "message"),
        message=_text(data, "last_assistant_message") if kind is ReceiptKind.TURN_FAILED else "",
    )


def _written_at(key: str) -> datetime | None:
    """The file name starts with `date +%s%N`: nanoseconds since the epoch."""
    stamp = key.split("-", 1)[0]
    if not stamp.isdigit() or len(stamp) < 10:
        return None
    return datetime.fromtimestamp(int(stamp) / 1e9, UTC)


def _notification(kind: str) -> ReceiptKind | None:
    if kind in _BLOCKING:
        return ReceiptKind.BLOCKED
    return ReceiptKind.IDLE if kind == "idle_prompt" else None


def _text(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    return value if isinstance(value, str) else ""
