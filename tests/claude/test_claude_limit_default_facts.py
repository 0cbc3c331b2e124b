"""Claude Code's own retries of API failures with its default retry budget:
what the-loop waits through before a StopFailure tells it anything."""

from __future__ import annotations

import re

import pytest

from tests.anthropic_standin.script import Fail
from tests.anthropic_standin.server import AnthropicStandIn, Kind
from tests.claude.fixtures import anthropic, claude, claude_binary, claude_config, claude_rig
from tests.claude.rig import ClaudeRig
from tests.tmux_support import wait_for

__all__ = ["anthropic", "claude", "claude_binary", "claude_config", "claude_rig"]

pytestmark = pytest.mark.claude


def test_by_default_a_529_fails_the_turn_after_three_requests_as_repeated_overloads(
    claude: ClaudeRig, anthropic: AnthropicStandIn
) -> None:
    anthropic.reset(fallback=Fail(529, "overloaded_error", "scripted overload", retry=True))
    session = claude.spawn(claude.folder(), prompt="hit the overload")
    ended = claude.hooks.wait(("Stop", "StopFailure"), session.session_id, timeout=60)
    assert (ended.event, ended["error"]) == ("StopFailure", "server_error")
    assert ended["last_assistant_message"].startswith("API Error: Repeated 529 Overloaded errors.")
    assert len(anthropic.requests(Kind.TURN)) == 3


def test_by_default_a_429_that_may_be_retried_is_retried_up_to_ten_times_with_no_hook_meanwhile(
    claude: ClaudeRig, anthropic: AnthropicStandIn
) -> None:
    anthropic.reset(
        fallback=Fail(429, "rate_limit_error", "scripted limit", retry=True, headers=(("retry-after", "1"),))
    )
    session = claude.spawn(claude.folder(), prompt="hit the limit and wait")
    wait_for(lambda: len(anthropic.requests(Kind.TURN)) >= 4, what="four requests", timeout=60)
    shown = wait_for(lambda: re.search(r"attempt \d+/10", claude.tmux.screen(session)), what="retries", timeout=60)
    assert shown is not None
    assert claude.hooks.of("StopFailure", session.session_id) == []
