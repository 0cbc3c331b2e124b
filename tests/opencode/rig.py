"""Real opencode offline: the pinned binary, a HOME whose configuration points it at the OpenAI stand-in
(Chat Completions), and spawns and pastes the-loop's way in a private tmux server. The pane work is
Codex's rig's (`CodexRig`); only the start differs."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from adapters.opencode.plugin import channel
from domain.model import SpawnRequest
from domain.refs import TmuxTarget
from tests.codex.rig import CodexRig, CodexSession, one_test, openai, served
from tests.openai_standin.server import OpenAIStandIn
from tests.pinned_tools import pin, required

__all__ = ["openai"]

PROVIDER = "standin"
CLOSED = "http://127.0.0.1:9"  # every proxy points at a closed port: nothing leaves the machine


def pinned_version() -> str:
    return str(pin("opencode").version)


def opencode_home(home: Path, base_url: str) -> Path:
    """The user's configuration: the stand-in as its model provider. Its folder also holds what
    opencode would install there from npm at its first start (offline that install takes ~70 s of
    retries before it gives up), as a user's machine has after that first start."""
    folder = home / ".config" / "opencode"
    (folder / "node_modules").mkdir(parents=True, exist_ok=True)
    provider = {
        "npm": "@ai-sdk/openai-compatible",
        "name": PROVIDER,
        "options": {"baseURL": base_url, "apiKey": "sk-standin"},
        "models": {"standin-model": {"name": "standin-model"}},
    }
    # the user's own rule: a shell command is asked about (the dialog the plugin reports as blocked)
    settings = {"model": f"{PROVIDER}/standin-model", "provider": {PROVIDER: provider}, "permission": {"bash": "ask"}}
    (folder / "opencode.json").write_text(json.dumps(settings), encoding="utf-8")
    dependency = {"@opencode-ai/plugin": pinned_version()}
    (folder / "package.json").write_text(json.dumps({"dependencies": dependency}), encoding="utf-8")
    lock = {"lockfileVersion": 3, "packages": {"": {"dependencies": dependency}}}
    (folder / "package-lock.json").write_text(json.dumps(lock), encoding="utf-8")
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
class OpencodeRig(CodexRig):
    """`codex_dir` is opencode's configuration folder here."""

    def spawn(self, cwd: Path, *args: str, prompt: str = "", hooks: bool = True) -> CodexSession:
        """`opencode ARGS PROMPT` in a new tmux session, with the-loop's plugin (`hooks`), as the spawn does it."""
        receipts = self.root / "receipts" / uuid.uuid4().hex[:8]
        receipts.mkdir(parents=True)
        env = channel(receipts) if hooks else ()
        target = TmuxTarget(f"loop-oc-{uuid.uuid4().hex[:8]}")
        mark = uuid.uuid4().hex
        request = SpawnRequest(
            target=target,
            argv=(str(self.binary), *args),
            cwd=str(cwd),
            prompt=prompt,
            mark=mark,
            remain_on_exit=True,
            env=env,
        )
        session = CodexSession(target, self.tmux.adapter().spawn(request), cwd, receipts, mark)
        self.spawned.append(session)
        return session


@pytest.fixture(scope="session")
def opencode_binary() -> Path:
    return required("opencode")


@pytest.fixture(scope="module")
def opencode_rig(
    opencode_binary: Path, openai: OpenAIStandIn, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[OpencodeRig]:
    base = tmp_path_factory.mktemp("opencode")
    config_dir = opencode_home(base / "home", openai.base_url)
    with served(OpencodeRig, opencode_binary, config_dir, opencode_env(base / "home"), base) as rig:
        yield rig


@pytest.fixture
def opencode(opencode_rig: OpencodeRig, openai: OpenAIStandIn) -> Iterator[OpencodeRig]:
    with one_test(opencode_rig, openai) as rig:
        yield rig
