"""Harness definitions: the built-ins and how the operator's `routing.harnesses` merge over them."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

from adapters.harnesses import hook_packages, profiles
from domain.receipts import ReceiptMode

_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")
_VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_DOLLAR_BRACE = re.compile(r"\$\{([^}]*)\}?")
# the choices of the pinned Claude Code's --permission-mode, and `default` (the same as `manual`),
# pinned in tests/claude/test_claude_permission_facts.py
PermissionMode = Literal["default", "manual", "acceptEdits", "auto", "bypassPermissions", "dontAsk", "plan"]


class HarnessSettings(BaseModel):
    """One `routing.harnesses.<name>` entry; a key left out keeps the built-in's value."""

    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, frozen=True)

    binary: str | None = Field(
        default=None,
        min_length=1,
        description="The executable; `{python}` is the interpreter running the-loop. Required unless built in.",
    )
    args: tuple[str, ...] = Field(default=(), description="Arguments always given, before the session arguments.")
    session_id_args: tuple[str, ...] = Field(
        default=(),
        description="Arguments starting a fresh conversation, just before the prompt (the last argument): "
        "`{session_id}` is substituted; a CLI that takes its first prompt from a flag ends them with that flag.",
    )
    resume_args: tuple[str, ...] = Field(
        default=(),
        description="Arguments resuming a conversation, just before the prompt (`{session_id}` substituted); "
        "empty: cannot resume.",
    )
    submit_delay_ms: int = Field(
        default=0, ge=0, description="Pause between pasting a prompt and submitting it (0: one tmux call for both)."
    )
    enter_retries: int = Field(
        default=0,
        ge=0,
        le=2,
        description="With receipts: a paste whose prompt receipt has not come 2 s after its Enter, and whose "
        "text the input box still shows (read from the screen), gets one more carriage return, up to this many "
        "times (at most 2); never a second paste.",
    )
    blocked_screens: tuple[str, ...] = Field(
        default=(),
        description=(
            "With receipts: text whose presence on the harness's screen means it waits on a dialog its hooks "
            "do not report; while one shows, the harness counts as blocked and nothing is pasted."
        ),
    )
    receipts: str = Field(
        default="none",
        description="How the harness confirms what it got: the name of a harness package whose hooks a spawn "
        "is handed (`claude`: Claude Code's, with `--settings`; `codex`: Codex's, trusted, with `-c`; `gemini`: "
        "the-loop's extension in Gemini CLI's folder; `opencode`: its plugin in `$OPENCODE_CONFIG_CONTENT`; see "
        "docs/harnesses.md), `file` (the harness writes receipt files into `$THE_LOOP_RECEIPTS` itself), or `none` "
        "(a delivery counts once the harness is still alive `confirmSeconds` later).",
    )

    @field_validator("receipts")
    @classmethod
    def _receipts_known(cls, receipts: str) -> str:
        known = {mode.value for mode in ReceiptMode if mode is not ReceiptMode.HOOKS} | set(hook_packages())
        if receipts not in known:
            raise ValueError(f"unknown receipts {receipts!r} (known: {', '.join(sorted(known))})")
        return receipts

    @property
    def receipt_mode(self) -> ReceiptMode:
        """The kind of channel: a package's hooks, receipt files of its own, or none."""
        return ReceiptMode(self.receipts) if self.receipts in {"file", "none"} else ReceiptMode.HOOKS

    ready_seconds: float | None = Field(
        default=None,
        gt=0,
        description="Seconds a new harness has to say it is ready (without receipts: to stay alive) before a "
        "paste; also how a resume is judged. Unset: 60 with receipts, else `routing.tmux.resumeProbeSeconds`.",
    )
    confirm_seconds: float = Field(
        default=10, gt=0, description="Seconds the harness has to confirm a paste (without receipts: to stay alive)."
    )
    trust_workdir: bool = Field(
        default=False,
        description="Record each spawn folder as trusted in the harness's user configuration "
        "(`projects.<dir>.hasTrustDialogAccepted` in `~/.claude.json`; with `receipts: codex`, "
        '`[projects."<dir>"] trust_level = "trusted"` in `$CODEX_HOME/config.toml`) so it does not open on the '
        "trust dialog.",
    )
    permission_mode: PermissionMode | None = Field(
        default=None,
        description="Claude Code's `--permission-mode`: `default` (also `manual`) asks before every risky tool, "
        "and each ask is answered from the item (`the-loop allow` / `deny`, docs/claude-code.md); `auto`, "
        "`acceptEdits`, `dontAsk` and `bypassPermissions` ask less or never; `plan` only plans. Unset: no flag.",
    )
    unvouched_args: tuple[str, ...] | None = Field(
        default=None,
        description="Arguments that make the harness load none of its folder's own settings, hooks, MCP servers "
        "or plugins, added when the folder holds a head the operator has not vouched for (a fork's pull request, "
        "docs/workspaces.md). Unset: the harness has no such start, and is not started in such a folder.",
    )
    env: dict[str, str] = Field(
        default={},
        description="Environment variables given to every spawn of the harness (tmux `-e`), so its pane never "
        "runs on values the tmux server kept from an earlier start; `${VAR}` in a value is the daemon's `VAR`, "
        "and a variable the daemon lacks stops `poll` (and is a ✗ in `doctor`). Values are never logged.",
    )
    pass_env: tuple[str, ...] = Field(
        default=(),
        description="Names of variables copied from the daemon's environment into every spawn (tmux `-e`), "
        "e.g. `ANTHROPIC_API_KEY`; a name the daemon lacks stops `poll` (and is a ✗ in `doctor`).",
    )

    @field_validator("env")
    @classmethod
    def _env_names_and_references(cls, env: dict[str, str]) -> dict[str, str]:
        for name, value in env.items():
            _check_variable(name)
            for reference in _DOLLAR_BRACE.finditer(value):
                if not reference[0].endswith("}") or not _VARIABLE.match(reference[1]):
                    # the value may be a secret: only the key is named
                    raise ValueError(f"{name}: a reference is written ${{NAME}} (letters, digits, '_')")
        return env

    @field_validator("pass_env")
    @classmethod
    def _pass_env_names(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        for name in names:
            _check_variable(name)
        return names


def _check_variable(name: str) -> None:
    if not _VARIABLE.match(name):
        raise ValueError(f"{name!r}: a variable name is letters, digits and '_', not starting with a digit")
    if name.startswith("THE_LOOP_"):
        raise ValueError(f"{name}: THE_LOOP_ variables are the-loop's own (its receipt channel)")


# the harness packages' built-in profiles (adapters/harnesses/<name>/profile.py), read as
# `routing.harnesses.<name>` merges over them, with what each one's hooks can do
_PROFILES = profiles()
BUILTIN_HARNESSES: Mapping[str, HarnessSettings] = {
    name: HarnessSettings.model_validate(profile.entry) for name, profile in _PROFILES.items()
}
# the hooks whose permission hook takes an allow with a rule for the session (`allow always`)
SESSION_RULES = frozenset(name for name, profile in _PROFILES.items() if profile.session_rules)
# the hooks of an agent that takes `permissionMode` (a routing rule's too)
PERMISSION_MODES = frozenset(name for name, profile in _PROFILES.items() if profile.permission_mode)
# the hooks of an agent that takes a prompt typed during its turn into that turn, unconfirmed
JOINS_RUNNING_TURN = frozenset(name for name, profile in _PROFILES.items() if not profile.paste_while_busy)


def check_harnesses(harnesses: dict[str, HarnessSettings]) -> dict[str, HarnessSettings]:
    """Refuse a bad name or a new harness without a binary (pydantic names the key)."""
    for name, harness in harnesses.items():
        if not _NAME.match(name):
            raise ValueError(f"{name!r}: a harness name is letters, digits, '.', '_' or '-'")
        if name not in BUILTIN_HARNESSES and harness.binary is None:
            raise ValueError(f"{name}.binary: required (no built-in harness is named {name!r})")
    return harnesses


def merge_harnesses(operator: Mapping[str, HarnessSettings]) -> dict[str, HarnessSettings]:
    """The built-ins with each operator entry laid over its namesake, key by key."""
    merged = dict(BUILTIN_HARNESSES)
    for name, harness in operator.items():
        base = merged.get(name)
        if base is None:
            merged[name] = harness
        else:
            changed = {key: getattr(harness, key) for key in harness.model_fields_set}
            merged[name] = base.model_copy(update=changed)
    return merged
