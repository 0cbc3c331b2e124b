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
gives it the same JSON fields (`hook_event_name`, `session_id`, `source`, `prompt`, a tool's
`tool_name` and `tool_input`), so `receipt_of` reads both. With `routing.askWaitSeconds` > 0 its
PermissionRequest hook is Claude Code's asking hook too (`asking_command`): Codex takes the same
allow / deny output (tests/codex/test_codex_permission_facts.py).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from adapters.agents.receipt_line import asking_command, asking_timeout, hook_command
from domain.model import ReceiptChannel

SOURCE = "/<session-flags>/config.toml"  # where Codex says a `-c` hook comes from (its state key)
TIMEOUT_SECONDS = 600  # Codex's default, part of the trusted identity
EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "Stop")


def label(event: str) -> str:
    """`UserPromptSubmit` -> `user_prompt_submit` (Codex's `hook_event_key_label`)."""
    return re.sub(r"(?<!^)([A-Z])", r"_\1", event).lower()


def trusted_hash(event: str, command: str, *, timeout: int = TIMEOUT_SECONDS) -> str:
    """The hash Codex records when a person trusts this hook (one handler, no matcher)."""
    identity = {
        "event_name": label(event),
        "hooks": [{"type": "command", "command": command, "timeout": timeout, "async": False}],
    }
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def arguments(folder: Path, *, ask_wait_seconds: float = 0.0) -> tuple[str, ...]:
    """`-c` overrides: one hook per event writing into `folder`, and each one's trust;
    `ask_wait_seconds` > 0: the PermissionRequest hook waits that long for an answer from the item."""
    handlers = {event: _Handler(hook_command(folder)) for event in EVENTS}
    if ask_wait_seconds > 0:
        handlers["PermissionRequest"] = _Handler(
            asking_command(folder, ask_wait_seconds), asking_timeout(ask_wait_seconds)
        )
    args: list[str] = []
    for event, handler in handlers.items():
        args += ["-c", f"hooks.{event}=[{{hooks=[{handler.toml()}]}}]"]
    state = ",".join(
        f"{_toml_string(f'{SOURCE}:{label(event)}:0:0')}="
        f"{{trusted_hash={_toml_string(trusted_hash(event, handler.command, timeout=handler.timeout))}}}"
        for event, handler in handlers.items()
    )
    return (*args, "-c", f"hooks.state={{{state}}}")


@dataclass(frozen=True, slots=True)
class _Handler:
    command: str
    timeout: int = TIMEOUT_SECONDS

    def toml(self) -> str:
        """The handler as an inline table; Codex's default timeout left unsaid, as before."""
        timeout = f",timeout={self.timeout}" if self.timeout != TIMEOUT_SECONDS else ""
        return f'{{type="command",command={_toml_string(self.command)}{timeout}}}'


def receipt_channel(folder: Path, *, ask_wait_seconds: float = 0.0) -> ReceiptChannel:
    """What a Codex spawn is handed so its receipts reach `folder`: these hooks, on its command line.
    `ask_wait_seconds`: how long its PermissionRequest hook waits for an answer."""
    return ReceiptChannel(args=arguments(folder, ask_wait_seconds=ask_wait_seconds))


def _toml_string(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's, for the characters a path and sh line hold)."""
    return json.dumps(text, ensure_ascii=False)
