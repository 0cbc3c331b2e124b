"""Issue 21 item 6: the kill campaign with the real Claude Code (`python -m bench.chaos --harness
claude`), short form — the poller, the tmux server and Claude Code itself SIGKILLed at random and
aimed instants while comments stream in, Claude Code offline against the Anthropic stand-in, every
comment accounted for from its own records (its UserPromptSubmit receipts and the model requests it
made): none lost, none twice, no live session killed. A fresh seed each run; a failure prints it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.claude.fixtures import claude_binary
from tests.e2e.test_chaos import campaign

__all__ = ["claude_binary"]

pytestmark = pytest.mark.claude


def test_issue21_item6_the_kill_campaign_with_claude_code_loses_nothing_duplicates_nothing_and_kills_no_live_session(
    claude_binary: Path,
) -> None:
    (kills, lost, duplicated, killed), output = campaign(8, "--harness", "claude", "--items", "3")
    assert (kills, lost, duplicated, killed) == (8, 0, 0, 0), output
    assert "claude: " in output and " 0 model requests" not in output, output  # Claude Code itself took them
