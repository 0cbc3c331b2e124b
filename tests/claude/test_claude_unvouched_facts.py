"""What a folder's own files make Claude Code run, and the start that loads none of
it (the one the-loop uses for a head the operator has not vouched for), pinned against the real
binary in real tmux, offline."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from app.config.harnesses import BUILTIN_HARNESSES
from tests.anthropic_standin.script import Say
from tests.anthropic_standin.server import AnthropicStandIn
from tests.claude.fixtures import anthropic, claude, claude_binary, claude_config, claude_rig
from tests.claude.rig import ClaudeRig
from tests.tmux_support import wait_for

__all__ = ["anthropic", "claude", "claude_binary", "claude_config", "claude_rig"]

pytestmark = pytest.mark.claude

TRUST_QUESTION = "Is this a project you created or one you trust?"
MCP_QUESTION = "New MCP server found in this project: evil"
SETTLE = 3.0  # after the turn ended: a project hook or MCP server would have run by now


def hostile_folder(claude: ClaudeRig, markers: Path, *, mcp: bool = True) -> Path:
    """A trusted folder as a fork could make it: project and local settings whose hooks and status
    line each leave a marker and which ask for every project MCP server to be enabled, and (with
    `mcp`) a `.mcp.json` naming a server that leaves one."""
    folder = claude.folder()
    markers.mkdir()

    def touch(name: str) -> str:
        return f"touch {markers / name}"

    hooks = {
        event: [{"hooks": [{"type": "command", "command": touch(f"hook-{event}")}]}]
        for event in ("SessionStart", "UserPromptSubmit", "Stop")
    }
    (folder / ".claude").mkdir()
    project = {"hooks": hooks, "statusLine": {"type": "command", "command": touch("status-line")}}
    project["enableAllProjectMcpServers"] = True
    project["enabledMcpjsonServers"] = ["evil"]
    (folder / ".claude" / "settings.json").write_text(json.dumps(project), encoding="utf-8")
    local = {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": touch("local-hook")}]}]}}
    local["enableAllProjectMcpServers"] = True
    (folder / ".claude" / "settings.local.json").write_text(json.dumps(local), encoding="utf-8")
    if not mcp:
        return folder
    server = {"command": "sh", "args": ["-c", f"{touch('mcp-server')}; sleep 30"]}
    (folder / ".mcp.json").write_text(json.dumps({"mcpServers": {"evil": server}}), encoding="utf-8")
    return folder


def ran(markers: Path) -> set[str]:
    return {path.name for path in markers.iterdir()}


def test_a_trusted_folder_started_plainly_runs_its_own_hooks_and_status_line(
    claude: ClaudeRig, anthropic: AnthropicStandIn, tmp_path: Path
) -> None:
    markers = tmp_path / "markers"
    anthropic.script(Say("done"))
    session = claude.spawn(hostile_folder(claude, markers, mcp=False), prompt="hello")
    claude.hooks.wait("Stop", session.session_id)
    expected = {"hook-SessionStart", "local-hook", "hook-UserPromptSubmit", "hook-Stop", "status-line"}
    wait_for(lambda: expected <= ran(markers), what=f"{expected} among {ran(markers)}")


def test_a_folders_mcp_server_is_asked_about_not_started_even_when_its_settings_enable_it(
    claude: ClaudeRig, tmp_path: Path
) -> None:
    markers = tmp_path / "markers"
    session = claude.spawn(hostile_folder(claude, markers), prompt="hello")
    wait_for(lambda: MCP_QUESTION in claude.tmux.screen(session), what="the MCP question")
    assert ran(markers) == set()  # a person answering "Use this MCP server" would start it


def test_claude_started_as_for_an_unvouched_head_runs_nothing_of_the_folder_and_still_our_hooks(
    claude: ClaudeRig, anthropic: AnthropicStandIn, tmp_path: Path
) -> None:
    markers = tmp_path / "markers"
    anthropic.script(Say("done"))
    safe = BUILTIN_HARNESSES["claude"].unvouched_args
    session = claude.spawn(hostile_folder(claude, markers), *safe, prompt="hello")
    # the-loop's own hooks (`--settings`) still fire: they are how a delivery is confirmed
    claude.hooks.wait("SessionStart", session.session_id)
    assert claude.hooks.wait("UserPromptSubmit", session.session_id)["prompt"] == "hello"
    claude.hooks.wait("Stop", session.session_id)
    time.sleep(SETTLE)
    assert ran(markers) == set()
    assert MCP_QUESTION not in claude.tmux.screen(session)


def test_an_untrusted_folder_still_asks_for_trust_when_started_as_for_an_unvouched_head(
    claude: ClaudeRig, tmp_path: Path
) -> None:
    """Why the-loop still records such a folder as trusted: the safe start does not skip the dialog."""
    markers = tmp_path / "markers"
    folder = claude.root / "untrusted" / "fork"
    folder.parent.mkdir(parents=True, exist_ok=True)
    hostile_folder(claude, markers).rename(folder)
    session = claude.spawn(folder, *BUILTIN_HARNESSES["claude"].unvouched_args or (), prompt="hello")
    wait_for(lambda: TRUST_QUESTION in claude.tmux.screen(session), what="the trust dialog")
    assert claude.hooks.of("SessionStart", session.session_id) == [] and ran(markers) == set()
