"""What a Copilot CLI spawn is handed so its receipts reach their folder: a plugin of the-loop's own,
in that folder, given with `--plugin-dir` — nothing of the user's configuration is written.

A plugin is a folder with `plugin.json` and `hooks/hooks.json` in Claude Code's format; hooks under
Claude Code's event names get Claude Code's snake_case fields (`hook_event_name`, `session_id`,
`prompt`, `source`: new or resume), which the receipt folders read as they read Claude Code's. Its
PermissionRequest hook gets Copilot's own camelCase fields instead and is not handed: a permission
dialog says so by PreToolUse, then a `permission_prompt` notification (blocked)."""

from __future__ import annotations

import json
from pathlib import Path

from adapters.agents.receipt_line import hook_command
from adapters.files.atomic import write_whole
from domain.model import ReceiptChannel

PLUGIN_FOLDER = "copilot-plugin"  # in the spawn's receipt folder: never a receipt's name
PLUGIN_NAME = "the-loop-receipts"
EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "Notification", "SessionEnd")


def receipt_channel(folder: Path) -> ReceiptChannel:
    """The plugin, written into `folder`, whose hooks write their receipts there."""
    plugin = folder / PLUGIN_FOLDER
    (plugin / "hooks").mkdir(parents=True, exist_ok=True)
    manifest = {"name": PLUGIN_NAME, "version": "1.0.0", "description": "the-loop's delivery receipts"}
    entry = [{"hooks": [{"type": "command", "command": hook_command(folder)}]}]
    write_whole(plugin / "plugin.json", json.dumps(manifest), mode=0o644, fsync=False)
    write_whole(
        plugin / "hooks" / "hooks.json", json.dumps({"hooks": dict.fromkeys(EVENTS, entry)}), mode=0o644, fsync=False
    )
    return ReceiptChannel(args=("--plugin-dir", str(plugin)))
