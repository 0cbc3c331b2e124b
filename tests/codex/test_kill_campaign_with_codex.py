"""Issue 21 item 6: the kill campaign with the real Codex (`python -m bench.chaos --harness codex`),
short form — the poller, the tmux server and Codex itself SIGKILLed at random and aimed instants
while comments stream in, Codex offline against the OpenAI stand-in, every comment accounted for
from Codex's own records (its UserPromptSubmit receipts and the model requests it made): none
lost, none twice, no live session killed. A fresh seed each run; a failure prints it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.codex.rig import codex_binary
from tests.e2e.test_chaos import campaign

__all__ = ["codex_binary"]

pytestmark = pytest.mark.codex


def test_issue21_item6_the_kill_campaign_with_codex_loses_nothing_duplicates_nothing_and_kills_no_live_session(
    codex_binary: Path,
) -> None:
    (kills, lost, duplicated, killed), output = campaign(8, "--harness", "codex", "--items", "3")
    assert (kills, lost, duplicated, killed) == (8, 0, 0, 0), output
    assert "codex: " in output and " 0 model requests" not in output, output  # Codex itself took them
