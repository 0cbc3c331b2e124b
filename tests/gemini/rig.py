"""Real Gemini CLI offline: the pinned bundle, a home whose Gemini has chosen its API key and finds
the-loop's extension, the Gemini API stand-in, and spawns and pastes the-loop's way in a private
tmux server."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from adapters.harnesses.gemini import hooks
from adapters.receipts.files import ENV_VARIABLE
from tests import agent_tmux
from tests.agent_tmux import AgentSession, AgentTmux, RigSessions
from tests.gemini_standin.server import GeminiStandIn
from tests.real_agents import binary_fixture, for_one_test, git_folder, private_tmux, rig_base, running, standin_fixture

AUTH = {"security": {"auth": {"selectedType": "gemini-api-key"}}}  # what a user chooses once


def gemini_home(home: Path, *, auth: bool = True) -> Path:
    """`home/.gemini` with the API key chosen (or not) and the-loop's extension installed."""
    folder = home / ".gemini"
    folder.mkdir(parents=True, exist_ok=True)
    if auth:
        (folder / "settings.json").write_text(json.dumps(AUTH), encoding="utf-8")
    hooks.install(folder)
    return folder


def gemini_env(home: Path, base_url: str) -> dict[str, str]:
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "GEMINI_API_KEY": "standin-key",
        "GOOGLE_GEMINI_BASE_URL": base_url,
    }


@dataclass
class GeminiRig(RigSessions):
    binary: Path
    gemini_dir: Path  # ~/.gemini
    tmux: AgentTmux
    root: Path
    spawned: list[AgentSession] = field(default_factory=list)

    def git_folder(self) -> Path:
        return git_folder(self.root)

    def spawn(self, cwd: Path, *args: str, prompt: str = "", hooks: bool = True) -> AgentSession:
        """`gemini --skip-trust ARGS PROMPT` in a new tmux session, receipts into a folder of its own."""
        receipts = agent_tmux.receipts_folder(self.root)
        env = ((ENV_VARIABLE, str(receipts)),) if hooks else ()
        argv = (str(self.binary), "--skip-trust", *args)
        return self.start("loop-gemini", argv, cwd=cwd, prompt=prompt, receipts=receipts, env=env)

    def fresh(self, cwd: Path, prompt: str) -> tuple[AgentSession, str]:
        """A new conversation under an id of ours, as the built-in profile starts it."""
        conversation = str(uuid.uuid4())
        return self.spawn(cwd, "--session-id", conversation, "--prompt-interactive", prompt=prompt), conversation

    def paste(self, session: AgentSession, text: str, *, submit_delay_ms: int = 3000) -> None:
        """As the built-in profile pastes (Gemini takes an Enter right after a paste for a newline)."""
        agent_tmux.paste(self.tmux, session, text, submit_delay_ms=submit_delay_ms)

    def kill(self, session: AgentSession) -> None:
        """Close its tmux session and end what Gemini left of its process group (it outlives it)."""
        agent_tmux.end_group(self.tmux, session)


gemini_binary = binary_fixture("gemini_binary", "gemini")
gemini_api = standin_fixture("gemini_api", GeminiStandIn)


@pytest.fixture(scope="module")
def gemini_rig(
    gemini_binary: Path, gemini_api: GeminiStandIn, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[GeminiRig]:
    base = rig_base(tmp_path_factory, "gemini")
    tmux = private_tmux(base / "tmux", gemini_env(base / "home", gemini_api.base_url))
    yield from running(GeminiRig(gemini_binary, gemini_home(base / "home"), tmux, root=base / "folders"), tmux)


@pytest.fixture
def gemini(gemini_rig: GeminiRig, gemini_api: GeminiStandIn) -> Iterator[GeminiRig]:
    yield from for_one_test(gemini_rig, gemini_api)
