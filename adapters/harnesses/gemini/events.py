"""Gemini CLI's hook events, read as receipts (`adapters.receipts.hook_json.receipt_of` reads them),
beside Claude Code's: the receipt folders read every harness's hooks; `adapters.harnesses.gemini` installs them.

Gemini CLI 0.61 gives each hook JSON with `hook_event_name`, `session_id`, `transcript_path` (its
session record, where `usage` reads what a turn cost), and per event `source` (SessionStart:
startup, resume, clear), `prompt` (BeforeAgent: the submitted text; AfterAgent: the same, for the
turn it ends), and `notification_type` (Notification: `ToolPermission`, a tool confirmation dialog
is open). No hook names a turn. Its SessionStart, SessionEnd and Notification bear Claude Code's
names; these are its own.
No event says a model request failed: a failed turn gives no receipt.
"""

from __future__ import annotations

from domain.receipts import ReceiptKind

KINDS = {
    "BeforeAgent": ReceiptKind.PROMPT,  # fires once a prompt is submitted, before the agent plans
    "BeforeTool": ReceiptKind.TOOL,
    "AfterTool": ReceiptKind.WORKING,
    "AfterAgent": ReceiptKind.TURN_ENDED,  # once per turn, after the final response
}
BLOCKING = frozenset({"ToolPermission"})  # Notification types meaning a dialog waits for a person
