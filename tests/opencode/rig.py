"""Real opencode offline: the pinned binary, a HOME whose configuration points it at the OpenAI stand-in
(Chat Completions), and spawns and pastes the-loop's way in a private tmux server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from adapters.harnesses.opencode.plugin import channel
from tests import agent_tmux
from tests.agent_tmux import AgentSession, AgentTmux, RigSessions
from tests.openai_standin.server import OpenAIStandIn
from tests.real_agents import binary_fixture, for_one_test, git_folder, private_tmux, rig_base, running, standin_fixture

PROVIDER = "standin"
CLOSED = "http://127.0.0.1:9"  # every proxy points at a closed port: nothing leaves the machine


def opencode_home(home: Path, base_url: str) -> Path:
    """The user's configuration, as a fresh home has it: the stand-in as its model provider, nothing
    else (not what opencode installs from npm into that folder at a start online)."""
    folder = home / ".config" / "opencode"
    folder.mkdir(parents=True, exist_ok=True)
    provider = {
        "npm": "@ai-sdk/openai-compatible",
        "name": PROVIDER,
        "options": {"baseURL": base_url, "apiKey": "sk-standin"},
        "models": {"standin-model": {"name": "standin-model"}},
    }
    # the user's own rule: a shell command is asked about (the dialog the plugin reports as blocked)
    settings = {"model": f"{PROVIDER}/standin-model", "provider": {PROVIDER: provider}, "permission": {"bash": "ask"}}
    (folder / "opencode.json").write_text(json.dumps(settings), encoding="utf-8")
    return folder


def opencode_env(home: Path) -> dict[str, str]:
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        **{name: CLOSED for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")},
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }


@dataclass
class OpencodeRig(RigSessions):
    binary: Path
    config_dir: Path  # ~/.config/opencode
    tmux: AgentTmux
    root: Path
    spawned: list[AgentSession] = field(default_factory=list)

    def git_folder(self) -> Path:
        return git_folder(self.root)

    def spawn(
        self, cwd: Path, *args: str, prompt: str = "", hooks: bool = True, ask_wait_seconds: float = 0.0
    ) -> AgentSession:
        """`opencode ARGS PROMPT` in a new tmux session, with the-loop's plugin (`hooks`), as the spawn
        does it; the plugin waits `ask_wait_seconds` for the answer to a permission request."""
        receipts = agent_tmux.receipts_folder(self.root)
        env = channel(receipts, ask_wait_seconds=ask_wait_seconds) if hooks else ()
        argv = (str(self.binary), *args)
        return self.start("loop-oc", argv, cwd=cwd, prompt=prompt, receipts=receipts, env=env)

    def kill(self, session: AgentSession) -> None:
        """Close its tmux session and wait for opencode to exit."""
        agent_tmux.end_process(self.tmux, session, "opencode")


opencode_binary = binary_fixture("opencode_binary", "opencode")
openai = standin_fixture("openai", OpenAIStandIn)


def opencode_rig_in(base: Path, binary: Path, openai: OpenAIStandIn) -> Iterator[OpencodeRig]:
    """A rig under `base`: a fresh home, a private tmux server started with its environment."""
    config_dir = opencode_home(base / "home", openai.base_url)
    tmux = private_tmux(base / "tmux", opencode_env(base / "home"))
    yield from running(OpencodeRig(binary, config_dir, tmux, root=base / "folders"), tmux)


@pytest.fixture(scope="module")
def opencode_rig(
    opencode_binary: Path, openai: OpenAIStandIn, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[OpencodeRig]:
    yield from opencode_rig_in(rig_base(tmp_path_factory, "opencode"), opencode_binary, openai)


@pytest.fixture
def opencode(opencode_rig: OpencodeRig, openai: OpenAIStandIn) -> Iterator[OpencodeRig]:
    yield from for_one_test(opencode_rig, openai)


@pytest.fixture
def opencode_fresh(
    opencode_binary: Path, openai: OpenAIStandIn, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[OpencodeRig]:
    """A rig of its own for one test: a home no opencode has started in."""
    openai.reset()
    try:
        yield from opencode_rig_in(rig_base(tmp_path_factory, "opencode-fresh"), opencode_binary, openai)
    finally:
        openai.release()
