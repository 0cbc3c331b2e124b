"""The hooks the-loop hands Gemini CLI: an extension of its own, `the-loop-receipts`, in the user's
Gemini folder (`$GEMINI_CLI_HOME/.gemini`, else `~/.gemini`), whose hooks write receipts only for
the-loop's spawns.

Gemini CLI 0.61 has no command-line option adding a settings file, and the files its environment
can name (`GEMINI_CLI_SYSTEM_SETTINGS_PATH`, `GEMINI_CLI_SYSTEM_DEFAULTS_PATH`) are read only when
they and every folder above them belong to root and no one else may write them ("Security Warning:
Skipping system settings file …": pinned in tests/gemini/test_gemini_facts.py). An extension is a
folder of its own (`gemini-extension.json`, `hooks/hooks.json`): no file of the user's is written,
and its hooks concatenate with theirs. Each hook is the receipt line Claude Code's and Codex's
hooks run, writing into the folder `$THE_LOOP_RECEIPTS` names — set in the-loop's spawns only, so
in every other Gemini the hook does nothing. The folder is rewritten only when it differs.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from adapters.agents.agent_config import gemini_home
from adapters.agents.receipt_line import FOLDER_VARIABLE, env_hook_command
from adapters.files.atomic import write_whole
from domain.model import ReceiptChannel

NAME = "the-loop-receipts"
VARIABLE = FOLDER_VARIABLE  # the spawn's receipt folder, named in its environment
EVENTS = ("SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent", "Notification", "SessionEnd")


def files() -> dict[str, str]:
    """The extension's files, by path inside it."""
    entry = [{"hooks": [{"type": "command", "name": NAME, "command": env_hook_command(VARIABLE)}]}]
    manifest = {"name": NAME, "version": "1.0.0", "description": "the-loop's receipts (only in its spawns)"}
    return {
        "gemini-extension.json": json.dumps(manifest, indent=2) + "\n",
        "hooks/hooks.json": json.dumps({"hooks": {event: entry for event in EVENTS}}, indent=2) + "\n",
    }


def install(home: Path) -> bool:
    """Write the extension under `home/extensions/` where it is missing or differs; whether it wrote."""
    folder = home / "extensions" / NAME
    wrote = False
    for name, text in files().items():
        path = folder / name
        try:
            if path.read_text(encoding="utf-8") == text:
                continue
        except OSError:
            pass
        path.parent.mkdir(parents=True, exist_ok=True)
        write_whole(path, text, fsync=False)
        wrote = True
    return wrote


def receipt_channel(folder: Path, *, home: Path | None = None) -> ReceiptChannel:
    """What a Gemini CLI spawn is handed so its receipts reach `folder`: the extension installed in
    `home` (None: Gemini CLI's own folder, as it finds it now), and the folder in its environment."""
    install(home or gemini_home(os.environ))
    return ReceiptChannel(env=((VARIABLE, str(folder)),))
