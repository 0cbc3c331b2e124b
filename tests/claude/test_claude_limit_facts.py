"""What Claude Code does when the API refuses a turn for a limit or an outage,
pinned against the real binary offline: what its StopFailure hook says, and how it retries."""

from __future__ import annotations

import json

import pytest

from tests.anthropic_standin.script import Fail
from tests.anthropic_standin.server import AnthropicStandIn, Kind
from tests.claude.fixtures import anthropic, claude, claude_binary, claude_config, claude_rig
from tests.claude.rig import ClaudeRig

__all__ = ["anthropic", "claude", "claude_binary", "claude_config", "claude_rig"]

pytestmark = pytest.mark.claude

RESET_HEADERS = (
    ("retry-after", "30"),
    ("anthropic-ratelimit-requests-reset", "2030-01-01T12:00:00Z"),
    ("anthropic-ratelimit-tokens-reset", "2030-01-01T12:00:00Z"),
    ("anthropic-ratelimit-unified-reset", "1893499200"),
    ("anthropic-ratelimit-unified-status", "rejected"),
)


CLAUDE_EXTRA_ENV = {"CLAUDE_CODE_MAX_RETRIES": "1"}


def test_a_429_that_says_do_not_retry_fails_the_turn_at_once_and_the_hook_gets_no_reset_time(
    claude: ClaudeRig, anthropic: AnthropicStandIn
) -> None:
    anthropic.reset(fallback=Fail(429, "rate_limit_error", "scripted limit", retry=False, headers=RESET_HEADERS))
    session = claude.spawn(claude.folder(), prompt="hit the limit")
    ended = claude.hooks.wait(("Stop", "StopFailure"), session.session_id)
    assert (ended.event, ended["error"]) == ("StopFailure", "rate_limit")
    assert ended["last_assistant_message"] == "API Error: Request rejected (429) · scripted limit"
    # none of the response's reset headers reaches the hook: only the error body's message does
    assert "2030" not in json.dumps(ended.data) and "1893499200" not in json.dumps(ended.data)
    assert len(anthropic.requests(Kind.TURN)) == 1


def test_with_max_retries_1_a_529_fails_the_turn_as_server_error_after_one_retry(
    claude: ClaudeRig, anthropic: AnthropicStandIn
) -> None:
    anthropic.reset(fallback=Fail(529, "overloaded_error", "scripted overload", retry=True))
    session = claude.spawn(claude.folder(), prompt="hit the overload")
    ended = claude.hooks.wait(("Stop", "StopFailure"), session.session_id, timeout=60)
    assert (ended.event, ended["error"]) == ("StopFailure", "server_error")
    assert ended["last_assistant_message"].startswith("API Error: 529 scripted overload. This is a server-side issue")
    assert len(anthropic.requests(Kind.TURN)) == 2


def test_with_max_retries_1_a_429_that_may_be_retried_fails_the_turn_after_one_retry(
    claude: ClaudeRig, anthropic: AnthropicStandIn
) -> None:
    anthropic.reset(
        fallback=Fail(429, "rate_limit_error", "scripted limit", retry=True, headers=(("retry-after", "1"),))
    )
    session = claude.spawn(claude.folder(), prompt="hit the limit twice")
    ended = claude.hooks.wait(("Stop", "StopFailure"), session.session_id, timeout=60)
    assert (ended.event, ended["error"]) == ("StopFailure", "rate_limit")
    assert len(anthropic.requests(Kind.TURN)) == 2
