"""Claude Code's idle notification, pinned against the real binary in tmux, offline.

A module of its own: the HOME's messageIdleNotifThresholdMs (60 s by default) is set short here."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.anthropic_standin.server import AnthropicStandIn
from tests.claude.fixtures import anthropic, claude, claude_binary, claude_rig
from tests.claude.rig import ClaudeRig

__all__ = ["anthropic", "claude", "claude_binary", "claude_rig"]

pytestmark = pytest.mark.claude

THRESHOLD_MS = 2000


@pytest.fixture(scope="module")
def claude_config() -> dict[str, Any]:
    return {"messageIdleNotifThresholdMs": THRESHOLD_MS}


def test_a_finished_turn_left_unanswered_fires_one_idle_prompt_notification_after_the_threshold(
    claude: ClaudeRig, anthropic: AnthropicStandIn
) -> None:
    session = claude.spawn(claude.folder(), prompt="hello")
    stop = claude.hooks.wait("Stop", session.session_id)
    idle = claude.hooks.wait("Notification", session.session_id, timeout=THRESHOLD_MS / 1000 + 10)
    assert idle["notification_type"] == "idle_prompt"
    assert idle["message"] == "Claude is waiting for your input"
    assert THRESHOLD_MS / 1000 <= (idle.at_ns - stop.at_ns) / 1e9 < THRESHOLD_MS / 1000 + 2
    time.sleep(THRESHOLD_MS / 1000 * 1.5)
    assert len(claude.hooks.of("Notification", session.session_id)) == 1
