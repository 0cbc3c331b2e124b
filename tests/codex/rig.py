"""Real Codex offline: the pinned binary, a CODEX_HOME pointing it at the OpenAI stand-in, and
spawns and pastes the-loop's way in a private tmux server; a World of the-loop's own on that server."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from adapters.agents.receipt_line import hook_command, record
from adapters.harnesses.codex.hooks import arguments, receipt_channel, trusted_hash
from adapters.harnesses.codex.trust import CodexTrust
from adapters.receipts.files import FileReceipts
from domain.model import HarnessSpec, ReceiptChannel
from domain.receipts import ReceiptMode
from tests import agent_tmux
from tests.agent_tmux import AgentSession, AgentTmux, RigSessions
from tests.claude.loop import builtin_spec, real_world
from tests.openai_standin.server import OpenAIStandIn, Say
from tests.real_agents import binary_fixture, for_one_test, git_folder, private_tmux, rig_base, running, standin_fixture
from tests.service.world import World

PROVIDER = "standin"


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


@dataclass
class CodexRig(RigSessions):
    binary: Path
    codex_dir: Path
    tmux: AgentTmux
    root: Path
    spawned: list[AgentSession] = field(default_factory=list)

    @property
    def config(self) -> Path:
        return self.codex_dir / "config.toml"

    def git_folder(self) -> Path:
        return git_folder(self.root)

    def trust(self, folder: Path) -> None:
        CodexTrust(self.config).trust(str(folder))

    def spawn(
        self,
        cwd: Path,
        *args: str,
        prompt: str = "",
        hooks: bool = True,
        ask_wait_seconds: float = 0.0,
        stop_lingers: float = 0.0,
    ) -> AgentSession:
        """`codex [-c hooks…] ARGS PROMPT` in a new tmux session, as the-loop's spawn does it
        (`ask_wait_seconds` > 0: its PermissionRequest hook waits that long for an answer;
        `stop_lingers` > 0: its Stop hook goes on that long after writing its receipt)."""
        receipts = agent_tmux.receipts_folder(self.root)
        hooked = arguments(receipts, ask_wait_seconds=ask_wait_seconds) if hooks else ()
        if stop_lingers:
            hooked = lingering_stop(hooked, receipts, stop_lingers)
        argv = (str(self.binary), *hooked, *args)
        return self.start("loop-codex", argv, cwd=cwd, prompt=prompt, receipts=receipts)

    def kill(self, session: AgentSession) -> None:
        """Close its tmux session and wait for Codex to exit."""
        agent_tmux.end_process(self.tmux, session, "Codex")


def lingering_stop(hooked: tuple[str, ...], folder: Path, seconds: float) -> tuple[str, ...]:
    """`arguments(folder)` with its Stop hook going on `seconds` after writing its receipt, and
    trusted so: a moment to type into while the hook runs, its receipt already written."""
    plain, lingering = hook_command(folder), f"{record(folder)}; sleep {seconds}; exit 0"
    swaps = {
        "hooks.Stop=": (json.dumps(plain, ensure_ascii=False), json.dumps(lingering, ensure_ascii=False)),
        "hooks.state=": (trusted_hash("Stop", plain), trusted_hash("Stop", lingering)),
    }
    changed = []
    for argument in hooked:
        old, new = next((swap for start, swap in swaps.items() if argument.startswith(start)), ("", ""))
        changed.append(argument.replace(old, new) if old else argument)
    assert changed != list(hooked), "the Stop hook's command or trust not found in the arguments"
    return tuple(changed)


codex_binary = binary_fixture("codex_binary", "codex")
# Codex asks for a task title beside each prompt, a request with no tools that can reach the stand-in
# before the turn's own: it is answered off the script, so a scripted reply always goes to the turn
openai = standin_fixture("openai", lambda: OpenAIStandIn(side=Say("A task title")))


@pytest.fixture(scope="module")
def codex_rig(
    codex_binary: Path, openai: OpenAIStandIn, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[CodexRig]:
    base = rig_base(tmp_path_factory, "codex")
    codex_dir = codex_home(base / "home" / ".codex", openai.base_url)
    tmux = private_tmux(base / "tmux", codex_env(base / "home", codex_dir))
    yield from running(CodexRig(codex_binary, codex_dir, tmux, root=base / "folders"), tmux)


@pytest.fixture
def codex(codex_rig: CodexRig, openai: OpenAIStandIn) -> Iterator[CodexRig]:
    yield from for_one_test(codex_rig, openai)


def world_for(
    rig: CodexRig,
    base: Path,
    spec: HarnessSpec | None = None,
    *,
    channels: Mapping[ReceiptMode, Callable[[Path], ReceiptChannel]] | None = None,
    **options: Any,
) -> World:
    """A world on the rig's tmux whose harness is `spec` (the built-in codex), its receipts reaching the
    folders through `channels` (Codex's), as the container names each harness's."""
    spec = spec or builtin_spec("codex", rig.binary)
    receipts = FileReceipts(base / "receipts", channels=channels or {"codex": receipt_channel})
    return real_world(rig.tmux.adapter(), spec, base, receipts=receipts, trust_port=CodexTrust(rig.config), **options)
