"""The-loop's trust records (adapters/harnesses/claude/trust.py) as the real Claude Code reads them, offline."""

from __future__ import annotations

import os
import time

import pytest

from adapters.harnesses.claude.trust import ClaudeTrust
from tests.claude.fixtures import anthropic, claude, claude_binary, claude_config, claude_rig
from tests.claude.rig import ClaudeRig

__all__ = ["anthropic", "claude", "claude_binary", "claude_config", "claude_rig"]

pytestmark = pytest.mark.claude

TRUST_QUESTION = "Is this a project you created or one you trust?"


def test_a_spawn_folder_reached_through_a_symlink_is_trusted_as_claude_sees_it(claude: ClaudeRig) -> None:
    real = claude.root / "data" / "agents"
    real.mkdir(parents=True)
    link = claude.root / "agents"
    os.symlink(real, link)  # spawnWorkdir ~/agents/{slug} with ~/agents a symlink
    folder = link / "github-acme-widgets-1"  # not made yet: the spawn makes it

    ClaudeTrust(claude.home.config_file).trust(str(folder))

    folder.mkdir()
    session = claude.spawn(folder, prompt="hello")
    started = claude.hooks.wait("SessionStart", session.session_id, timeout=15)
    assert started["cwd"] == str(real / "github-acme-widgets-1")
    time.sleep(0.5)
    assert TRUST_QUESTION not in claude.tmux.screen(session)
