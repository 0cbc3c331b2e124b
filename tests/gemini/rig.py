"""Real Gemini CLI offline: the pinned bundle, a home whose Gemini has chosen its API key and finds
the-loop's extension, the Gemini API stand-in, and spawns and pastes the-loop's way in a private
tmux server (the Codex rig's, with Gemini's start)."""

from __future__ import annotations

import json
import os
import signal
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from adapters.gemini import hooks
from adapters.receipts.files import ENV_VARIABLE
from domain.model import SpawnRequest
from domain.refs import TmuxTarget
from tests.claude.rig import _gone
from tests.codex.rig import CodexRig, CodexSession
from tests.gemini_standin.server import GeminiStandIn
from tests.pinned_tools import pin
from tests.real_agents import binary_fixture, for_one_test, private_tmux, rig_base, running, standin_fixture

ROOT = Path(__file__).resolve().parents[2]
AUTH = {"security": {"auth": {"selectedType": "gemini-api-key"}}}  # what a user chooses once


def pinned_version() -> str:
    """The version scripts/install_gemini.py installs."""
    return str(pin("gemini").version)


def installed_binary() -> Path:
    return ROOT / ".tools" / "gemini" / pinned_version() / "bundle" / "gemini.js"


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
class GeminiRig(CodexRig):
    """`codex_dir` is Gemini's folder (`~/.gemini`) here."""

    def spawn(self, cwd: Path, *args: str, prompt: str = "", hooks: bool = True) -> CodexSession:
        """`gemini --skip-trust ARGS PROMPT` in a new tmux session, receipts into a folder of its own."""
        receipts = self.root / "receipts" / uuid.uuid4().hex[:8]
        receipts.mkdir(parents=True)
        target = TmuxTarget(f"loop-gemini-{uuid.uuid4().hex[:8]}")
        mark = uuid.uuid4().hex
        env = ((ENV_VARIABLE, str(receipts)),) if hooks else ()
        request = SpawnRequest(
            target=target,
            argv=(str(self.binary), "--skip-trust", *args),
            cwd=str(cwd),
            prompt=prompt,
            mark=mark,
            remain_on_exit=True,
            env=env,
        )
        session = CodexSession(target, self.tmux.adapter().spawn(request), cwd, receipts, mark)
        self.spawned.append(session)
        return session

    def fresh(self, cwd: Path, prompt: str) -> tuple[CodexSession, str]:
        """A new conversation under an id of ours, as the built-in profile starts it."""
        conversation = str(uuid.uuid4())
        return self.spawn(cwd, "--session-id", conversation, "--prompt-interactive", prompt=prompt), conversation

    def paste(self, session: CodexSession, text: str, *, submit_delay_ms: int = 3000) -> None:
        """As the built-in profile pastes (Gemini takes an Enter right after a paste for a newline)."""
        adapter = self.tmux.adapter()
        delivery = f"fact-{uuid.uuid4().hex[:6]}"
        adapter.deliver(
            session.target,
            text,
            delivery_id=delivery,
            pane=session.pane,
            mark=session.mark,
            submit_delay_ms=submit_delay_ms,
        )

    def group(self, session: CodexSession) -> int:
        out = self.tmux.run("display-message", "-p", "-t", session.pane, "#{pane_pid}", check=False).strip()
        return int(out or 0)

    def kill(self, session: CodexSession) -> None:
        """Close its tmux session and end what Gemini left of its process group (it outlives it)."""
        pid = self.group(session)
        self.tmux.run("kill-session", "-t", session.target.exact, check=False)
        if pid:
            for signum in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(pid, signum)
                except ProcessLookupError:
                    break
                deadline = time.monotonic() + 10
                while group_members(pid) and time.monotonic() < deadline:
                    time.sleep(0.05)


def group_members(group: int) -> list[int]:
    """Live processes of process group `group` (zombies left out)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group and not _gone(int(entry.name)):
            members.append(int(entry.name))
    return members


gemini_binary = binary_fixture("gemini_binary", installed_binary, f"Gemini CLI {pinned_version()}")
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
