"""Real GitHub Copilot CLI offline: the pinned binary, a HOME whose Copilot uses a custom model provider
(BYOK, `COPILOT_PROVIDER_BASE_URL`: the OpenAI stand-in's Chat Completions) in its offline mode, a hook
plugin per spawn (`--plugin-dir`, the way the-loop would hand it), and spawns and pastes the-loop's way
in a private tmux server."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from adapters.agents.receipt_line import SUFFIX, hook_command
from tests import agent_tmux
from tests.agent_tmux import AgentSession, AgentTmux, RigSessions
from tests.openai_standin.server import OpenAIStandIn
from tests.real_agents import binary_fixture, for_one_test, git_folder, private_tmux, rig_base, running, standin_fixture

CLOSED = "http://127.0.0.1:9"  # every proxy points at a closed port: nothing leaves the machine
PLUGIN = "the-loop-receipts"
# Claude Code's names: a plugin's hooks under them get Claude Code's snake_case fields
EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "Stop", "Notification")


def hook_plugin(folder: Path, receipts: Path) -> Path:
    """A plugin folder (`plugin.json`, `hooks/hooks.json` in Claude Code's format) whose hooks write
    receipts into `receipts`: what the-loop would hand each spawn with `--plugin-dir`."""
    entry = [{"hooks": [{"type": "command", "command": hook_command(receipts)}]}]
    (folder / "hooks").mkdir(parents=True)
    manifest = {"name": PLUGIN, "version": "1.0.0", "description": "the-loop's receipts"}
    (folder / "plugin.json").write_text(json.dumps(manifest), encoding="utf-8")
    (folder / "hooks" / "hooks.json").write_text(json.dumps({"hooks": dict.fromkeys(EVENTS, entry)}), encoding="utf-8")
    return folder


def copilot_env(home: Path, base_url: str) -> dict[str, str]:
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "COPILOT_OFFLINE": "true",  # no GitHub sign-in, telemetry or update check
        "COPILOT_PROVIDER_BASE_URL": base_url,
        "COPILOT_PROVIDER_API_KEY": "sk-standin",
        "COPILOT_MODEL": "standin-model",
        "HTTPS_PROXY": CLOSED,
        "HTTP_PROXY": CLOSED,
        "NO_PROXY": "127.0.0.1,localhost",
    }


@dataclass
class CopilotRig(RigSessions):
    binary: Path
    copilot_dir: Path  # ~/.copilot
    tmux: AgentTmux
    root: Path
    spawned: list[AgentSession] = field(default_factory=list)

    def git_folder(self) -> Path:
        return git_folder(self.root)

    def trust(self, folder: Path) -> None:
        """Record `folder` in `trustedFolders` of ~/.copilot/config.json, as "Yes, and remember this
        folder" does (Copilot writes that file as JSON after two `//` comment lines)."""
        config = self.copilot_dir / "config.json"
        text = config.read_text(encoding="utf-8") if config.exists() else "{}"
        data: dict[str, Any] = json.loads("\n".join(line for line in text.splitlines() if not line.startswith("//")))
        data["trustedFolders"] = [*data.get("trustedFolders", []), str(folder)]
        config.write_text(json.dumps(data), encoding="utf-8")

    def spawn(self, cwd: Path, *args: str, prompt: str = "", hooks: bool = True) -> AgentSession:
        """`copilot --no-auto-update [--plugin-dir PLUGIN] ARGS PROMPT` in a new tmux session."""
        receipts = agent_tmux.receipts_folder(self.root)
        plugin = ("--plugin-dir", str(hook_plugin(receipts.with_name(receipts.name + ".plugin"), receipts)))
        argv = (str(self.binary), "--no-auto-update", *(plugin if hooks else ()), *args)
        return self.start("loop-copilot", argv, cwd=cwd, prompt=prompt, receipts=receipts)

    def fresh(self, cwd: Path, prompt: str, *, hooks: bool = True) -> tuple[AgentSession, str]:
        """A new conversation under an id of ours, the prompt submitted by the interactive TUI."""
        conversation = str(uuid.uuid4())
        return self.spawn(cwd, "--session-id", conversation, "-i", prompt=prompt, hooks=hooks), conversation

    def hook_inputs(self, session: AgentSession) -> list[dict[str, Any]]:
        """Every JSON the session's hooks were given, in order, whether or not the-loop reads it."""
        names = sorted(p.name for p in session.receipts.iterdir() if p.name.endswith(SUFFIX))
        texts = [(session.receipts / name).read_text(encoding="utf-8") for name in names]
        return [json.loads(text) if text else {} for text in texts]

    def kill(self, session: AgentSession) -> None:
        """Close its tmux session and end what Copilot left of its process group."""
        agent_tmux.end_group(self.tmux, session)


copilot_binary = binary_fixture("copilot_binary", "copilot")
openai = standin_fixture("openai", OpenAIStandIn)


@pytest.fixture(scope="module")
def copilot_rig(
    copilot_binary: Path, openai: OpenAIStandIn, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[CopilotRig]:
    base = rig_base(tmp_path_factory, "copilot")
    copilot_dir = base / "home" / ".copilot"
    copilot_dir.mkdir(parents=True)
    tmux = private_tmux(base / "tmux", copilot_env(base / "home", openai.base_url))
    yield from running(CopilotRig(copilot_binary, copilot_dir, tmux, root=base / "folders"), tmux)


@pytest.fixture
def copilot(copilot_rig: CopilotRig, openai: OpenAIStandIn) -> Iterator[CopilotRig]:
    yield from for_one_test(copilot_rig, openai)
