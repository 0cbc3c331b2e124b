"""Real Codex offline: the pinned binary, a CODEX_HOME pointing it at the OpenAI stand-in, and
spawns and pastes the-loop's way in a private tmux server."""

from __future__ import annotations

import os
import signal
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import pytest

from adapters.codex.hooks import arguments
from adapters.codex.trust import CodexTrust
from adapters.receipts.hooks import receipt_of
from adapters.support.receipt_line import SUFFIX
from domain.model import SpawnRequest
from domain.receipts import Receipt, ReceiptKind
from domain.refs import TmuxTarget
from tests.claude.rig import ClaudeTmux, _gone
from tests.openai_standin.server import OpenAIStandIn
from tests.pinned_tools import pin
from tests.real_agents import for_one_test, required, serving
from tests.tmux_support import require_tmux, wait_for

ROOT = Path(__file__).resolve().parents[2]
R = TypeVar("R", bound="CodexRig")
PROVIDER = "standin"


def pinned_version() -> str:
    """The version scripts/install_codex.py installs."""
    return str(pin("codex").version)


def installed_binary() -> Path:
    return ROOT / ".tools" / "codex" / pinned_version() / "codex"


def codex_home(path: Path, base_url: str) -> Path:
    """A CODEX_HOME whose model provider is the stand-in (no sign-in: its key comes from the env)."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.toml").write_text(
        f'model = "standin-model"\nmodel_provider = "{PROVIDER}"\n\n'
        f'[model_providers.{PROVIDER}]\nname = "{PROVIDER}"\nbase_url = "{base_url}"\n'
        'wire_api = "responses"\nenv_key = "OPENAI_API_KEY"\n',
        encoding="utf-8",
    )
    return path


def codex_env(home: Path, codex_dir: Path) -> dict[str, str]:
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "CODEX_HOME": str(codex_dir),
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "OPENAI_API_KEY": "sk-standin",
    }


@dataclass(frozen=True, slots=True)
class CodexSession:
    target: TmuxTarget
    pane: str
    cwd: Path
    receipts: Path  # the folder its hooks write into
    mark: str


@dataclass
class CodexRig:
    binary: Path
    codex_dir: Path
    tmux: ClaudeTmux
    root: Path
    spawned: list[CodexSession] = field(default_factory=list)

    @property
    def config(self) -> Path:
        return self.codex_dir / "config.toml"

    def git_folder(self) -> Path:
        """A never-seen git repository (the-loop's workspaces are git worktrees)."""
        folder = self.root / uuid.uuid4().hex[:8]
        folder.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(folder)], check=True, timeout=30)
        return folder

    def trust(self, folder: Path) -> None:
        CodexTrust(self.config).trust(str(folder))

    def spawn(self, cwd: Path, *args: str, prompt: str = "", hooks: bool = True) -> CodexSession:
        """`codex [-c hooks…] ARGS PROMPT` in a new tmux session, as the-loop's spawn does it."""
        receipts = self.root / "receipts" / uuid.uuid4().hex[:8]
        receipts.mkdir(parents=True)
        target = TmuxTarget(f"loop-codex-{uuid.uuid4().hex[:8]}")
        argv = (str(self.binary), *(arguments(receipts) if hooks else ()), *args)
        mark = uuid.uuid4().hex
        request = SpawnRequest(target=target, argv=argv, cwd=str(cwd), prompt=prompt, mark=mark, remain_on_exit=True)
        session = CodexSession(target, self.tmux.adapter().spawn(request), cwd, receipts, mark)
        self.spawned.append(session)
        return session

    def paste(self, session: CodexSession, text: str) -> None:
        delivery = f"fact-{uuid.uuid4().hex[:6]}"
        self.tmux.adapter().deliver(session.target, text, delivery_id=delivery, pane=session.pane, mark=session.mark)

    def screen(self, session: CodexSession) -> str:
        return self.tmux.run("capture-pane", "-p", "-t", session.pane, check=False)

    def receipts(self, session: CodexSession) -> list[Receipt]:
        names = sorted(p.name for p in session.receipts.iterdir() if p.name.endswith(SUFFIX))
        found = [receipt_of(n.removesuffix(SUFFIX), (session.receipts / n).read_text()) for n in names]
        return [r for r in found if r is not None]

    def wait(self, session: CodexSession, kind: ReceiptKind, count: int = 1, timeout: float = 60.0) -> list[Receipt]:
        return list(
            wait_for(
                lambda: (r := [x for x in self.receipts(session) if x.kind is kind])[count - 1 :] and r,
                timeout=timeout,
                what=f"{count} {kind.value} receipt(s); screen:\n{self.screen(session)}",
            )
        )

    def kill(self, session: CodexSession) -> None:
        """Close its tmux session and wait for Codex to exit."""
        pid = int(self.tmux.run("display-message", "-p", "-t", session.pane, "#{pane_pid}", check=False).strip() or 0)
        if pid and not _gone(pid):
            os.kill(pid, signal.SIGHUP)
        self.tmux.run("kill-session", "-t", session.target.exact, check=False)
        if pid:
            wait_for(lambda: _gone(pid), timeout=20, what=f"Codex {pid} exited")

    def close(self, since: int = 0) -> None:
        for session in self.spawned[since:]:
            self.kill(session)
        del self.spawned[since:]


@pytest.fixture(scope="session")
def codex_binary() -> Path:
    return required(installed_binary(), f"Codex {pinned_version()}")


@pytest.fixture(scope="module")
def openai() -> Iterator[OpenAIStandIn]:
    yield from serving(OpenAIStandIn())


@contextmanager
def served(kind: type[R], binary: Path, config_dir: Path, env: dict[str, str], base: Path) -> Iterator[R]:
    """A rig of `kind` on a private tmux server started with `env`; everything it spawned ended after."""
    require_tmux()
    tmux = ClaudeTmux(base / "tmux")
    tmux.tmpdir.mkdir()
    tmux.start(env)
    rig = kind(binary, config_dir, tmux, root=base / "folders")
    try:
        yield rig
    finally:
        rig.close()
        tmux.kill_server()


@contextmanager
def one_test(rig: R, standin: OpenAIStandIn) -> Iterator[R]:
    """The rig for one test: a fresh stand-in script, and what the test spawned ended after it."""
    standin.reset()
    before = len(rig.spawned)
    try:
        yield rig
    finally:
        standin.release()
        rig.close(since=before)


@pytest.fixture(scope="module")
def codex_rig(
    codex_binary: Path, openai: OpenAIStandIn, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[CodexRig]:
    base = tmp_path_factory.mktemp("codex")
    codex_dir = codex_home(base / "home" / ".codex", openai.base_url)
    with served(CodexRig, codex_binary, codex_dir, codex_env(base / "home", codex_dir), base) as rig:
        yield rig


@pytest.fixture
def codex(codex_rig: CodexRig, openai: OpenAIStandIn) -> Iterator[CodexRig]:
    yield from for_one_test(codex_rig, openai)
