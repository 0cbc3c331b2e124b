"""The hooks the-loop hands Codex, on its command line only, and already trusted.

Codex reads hooks from every configuration layer, the `-c key=value` overrides included (the
"session flags" layer, named `/<session-flags>/config.toml`). A hook that is not managed runs only
once trusted: `hooks.state."<source>:<event>:<group>:<handler>".trusted_hash` must equal the
sha256 of the hook's normalized identity (canonical JSON: the event's snake-case label, the matcher
group, the handler with its default timeout 600 s and `async` false), or Codex opens "Hooks need
review" before anything else. A careful user trusts exactly these hooks and no other, and so does
the-loop: the state goes on the same command line, so the user's `config.toml` is never written
for hooks, the folder's own hooks stay as untrusted as they were, and no
`--dangerously-bypass-hook-trust` is used.

Each hook is the same shell line as Claude Code's (`adapters.agents.receipt_line.hook_command`): Codex
gives it the same JSON fields (`hook_event_name`, `session_id`, `source`, `prompt`), so
`receipt_of` reads both.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from adapters.agents.receipt_line import hook_command
from domain.model import ReceiptChannel

SOURCE = "/<session-flags>/config.toml"  # where Codex says a `-c` hook comes from (its state key)
TIMEOUT_SECONDS = 600  # Codex's default, part of the trusted identity
EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "Stop")


def label(event: str) -> str:
    """`UserPromptSubmit` -> `user_prompt_submit` (Codex's `hook_event_key_label`)."""
    return re.sub(r"(?<!^)([A-Z])", r"_\1", event).lower()


def trusted_hash(event: str, command: str) -> str:
    """The hash Codex records when a person trusts this hook (one handler, no matcher)."""
    identity = {
        "event_name": label(event),
        "hooks": [{"type": "command", "command": command, "timeout": TIMEOUT_SECONDS, "async": False}],
    }
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def arguments(folder: Path) -> tuple[str, ...]:
    """`-c` overrides: one hook per event writing into `folder`, and each one's trust."""
    command = hook_command(folder)
    quoted = _toml_string(command)
    args: list[str] = []
    for event in EVENTS:
        args += ["-c", f'hooks.{event}=[{{hooks=[{{type="command",command={quoted}}}]}}]']
    state = ",".join(
        f"{_toml_string(f'{SOURCE}:{label(event)}:0:0')}={{trusted_hash={_toml_string(trusted_hash(event, command))}}}"
        for event in EVENTS
    )
    return (*args, "-c", f"hooks.state={{{state}}}")


def receipt_channel(folder: Path) -> ReceiptChannel:
    """What a Codex spawn is handed so its receipts reach `folder`: these hooks, on its command line."""
    return ReceiptChannel(args=arguments(folder))


def _toml_string(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's, for the characters a path and sh line hold)."""
    return json.dumps(text, ensure_ascii=False)
