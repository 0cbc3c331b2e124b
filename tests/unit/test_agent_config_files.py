"""`doctor` reads and checks each agent's configuration where the-loop writes it: Claude Code's and
Codex's trust writers, and the Gemini CLI extension, write the very files and folder that `doctor`
names, in every environment the agents honour (HOME, CLAUDE_CONFIG_DIR, CODEX_HOME, GEMINI_CLI_HOME)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from adapters.harnesses.claude.trust import ClaudeTrust
from adapters.harnesses.codex.trust import CodexTrust
from adapters.harnesses.gemini import hooks as gemini_hooks
from tests.service.test_doctor import SANDBOX, FakeMachine, checks

VARIABLES = ("HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME")
EVERY_AGENT = {**SANDBOX, "routing": {"defaultHarness": "claude", "harnesses": {"codex": {}, "gemini": {}}}}


class AskedMachine(FakeMachine):
    """The fake machine, noting each configuration file `doctor` reads or checks."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[Path] = []

    def json_file(self, path: Path) -> Mapping[str, Any] | None:
        self.asked.append(path)
        return super().json_file(path)

    def toml_file(self, path: Path) -> Mapping[str, Any] | None:
        self.asked.append(path)
        return super().toml_file(path)

    def file_writable(self, path: Path) -> str:
        self.asked.append(path)
        return super().file_writable(path)


@pytest.mark.parametrize("set_by_variable", [(), ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME")])
def test_each_agents_file_doctor_reads_is_the_one_the_loop_writes(
    set_by_variable: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home")}
    env |= {name: str(tmp_path / name.lower()) for name in set_by_variable}
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    machine = AskedMachine()
    checks(EVERY_AGENT, machine, environ=env)  # the daemon's environment is the panes' (no tmux server runs)

    ClaudeTrust(settle_seconds=0).trust("/w/one")
    CodexTrust(settle_seconds=0).trust("/w/one", hooks="codex")
    gemini_hooks.receipt_channel(tmp_path / "receipts")

    written = sorted(str(path.relative_to(tmp_path)) for path in tmp_path.rglob("*") if path.is_file())
    claude, codex = (path for path in dict.fromkeys(machine.asked) if path.name in {".claude.json", "config.toml"})
    gemini = next(path for path in machine.asked if path.name == "settings.json").parent
    assert {str(claude.relative_to(tmp_path)), str(codex.relative_to(tmp_path))} <= set(written)
    assert "/w/one" in claude.read_text() and "/w/one" in codex.read_text()
    assert (gemini / "extensions" / gemini_hooks.NAME / "gemini-extension.json").is_file()
