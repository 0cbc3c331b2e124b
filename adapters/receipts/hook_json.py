"""A hook's JSON read as a receipt, the same for every harness whose hooks the-loop writes: the
vocabulary Claude Code's hooks gave first, which Codex's (and GitHub Copilot CLI's) give under the
same names and fields, and each harness package's own names beside it (`adapters.harnesses`,
its `events`: Gemini CLI's).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from adapters.harnesses import hook_events
from adapters.receipts.flat_json import top_level
from domain.receipts import INPUT_DEPTH, Receipt, ReceiptKind, too_deep

# a request names its tool; so does a tool's run, which answers the request for it (`open_requests`)
_NAMES_TOOL = {"PermissionRequest", "PostToolUse", "PostToolUseFailure"}
# agent_needs_input: Claude Code's own dialogs that wait for a choice (its auto mode's "can't check
# actions" among them: tests/claude/test_claude_permission_facts.py)
_OWN_KINDS, _OWN_BLOCKING = hook_events()  # each harness package's own names for the same moments
_BLOCKING = {"permission_prompt", "elicitation_dialog", "agent_needs_input", *_OWN_BLOCKING}
_KINDS = {
    "SessionStart": ReceiptKind.READY,
    "UserPromptSubmit": ReceiptKind.PROMPT,
    # before any permission check: Claude Code may draw its dialog before PermissionRequest's
    # receipt is written, never before PreToolUse's (docs/claude-code.md)
    "PreToolUse": ReceiptKind.TOOL,
    # the dialog is open as this fires; the permission_prompt notification says so ~6 s later
    "PermissionRequest": ReceiptKind.BLOCKED,
    "PostToolUse": ReceiptKind.WORKING,
    "PostToolUseFailure": ReceiptKind.WORKING,  # it ran and failed: the turn goes on
    "Stop": ReceiptKind.TURN_ENDED,
    "StopFailure": ReceiptKind.TURN_FAILED,
    "SessionEnd": ReceiptKind.ENDED,
    **_OWN_KINDS,
}


def receipt_of(key: str, text: str) -> Receipt | None:
    """One receipt file read as a receipt; None for what says nothing the-loop acts on."""
    data = _object(text)
    if data is None:
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
        tool=_text(data, "tool_name") if event in _NAMES_TOOL else "",
        tool_input=_json(data.get("tool_input")) if event in _NAMES_TOOL else "",
        message=_text(data, "last_assistant_message") if kind is ReceiptKind.TURN_FAILED else "",
        turn=_turn(data, kind),
        transcript=_text(data, "transcript_path"),
    )


def _turn(data: dict[str, Any], kind: ReceiptKind) -> str:
    """The turn the receipt is about (Claude Code's `prompt_id`, Codex's `turn_id`). A prompt's
    receipt names the turn the prompt runs in only by `turn_id`: Codex's names the running turn when
    the prompt joins it. Claude Code's `prompt_id` there names the turn running when the prompt came,
    which a prompt queued while it is busy does not join — its own turn follows, its Stop naming its
    own id (tests/claude/test_claude_usage_facts.py) — so it is no turn of the prompt's."""
    if kind is ReceiptKind.PROMPT:
        return _text(data, "turn_id")
    return _text(data, "prompt_id") or _text(data, "turn_id")


def _object(text: str) -> dict[str, Any] | None:
    """The hook's JSON object; one holding a tool's input nested too deep to read (past what the
    parser takes, or than `too_deep` allows) read by its top level, that input unreadable — the
    rest of the receipt still says what happened."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    except RecursionError:
        return top_level(text)
    if not isinstance(data, dict):
        return None
    return top_level(text) if too_deep(data, levels=INPUT_DEPTH + 1) else data


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


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=False) if isinstance(value, dict) else "{}"


def _text(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    return value if isinstance(value, str) else ""
