"""Issue 21 item 6: the kill campaign with the real opencode (`python -m bench.chaos --harness
opencode`), short form — the poller, the tmux server and opencode itself SIGKILLed at random and
aimed instants while comments stream in, opencode offline against the OpenAI stand-in, every comment
accounted for from opencode's own records (its plugin's prompt receipts and the model requests it
made): none lost, none twice, no live session killed. A fresh seed each run; a failure prints it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.test_chaos import campaign
from tests.opencode.rig import opencode_binary

__all__ = ["opencode_binary"]

pytestmark = pytest.mark.tmux


def test_issue21_item6_the_kill_campaign_with_opencode_loses_nothing_duplicates_nothing_and_kills_no_live_session(
    opencode_binary: Path,
) -> None:
    (kills, lost, duplicated, killed), output = campaign(6, "--harness", "opencode", "--items", "2")
    assert (kills, lost, duplicated, killed) == (6, 0, 0, 0), output
    assert "opencode: " in output and " 0 model requests" not in output, output  # opencode itself took them
