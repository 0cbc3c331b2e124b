"""Issue 21 item 6: the kill campaign with the real Gemini CLI (`python -m bench.chaos --harness
gemini`), short form — the poller, the tmux server and Gemini itself SIGKILLed at random and aimed
instants while comments stream in, Gemini offline against the Gemini API stand-in, every comment
accounted for from Gemini's own records (its extension's BeforeAgent receipts and the model requests
it made): none lost, none twice, no live session killed. A fresh seed each run; a failure prints it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.test_chaos import campaign
from tests.gemini.rig import gemini_binary

__all__ = ["gemini_binary"]

pytestmark = pytest.mark.gemini


def test_issue21_item6_the_kill_campaign_with_gemini_loses_nothing_duplicates_nothing_and_kills_no_live_session(
    gemini_binary: Path,
) -> None:
    (kills, lost, duplicated, killed), output = campaign(6, "--harness", "gemini", "--items", "2")
    assert (kills, lost, duplicated, killed) == (6, 0, 0, 0), output
    assert "gemini: " in output and " 0 model requests" not in output, output  # Gemini itself took them
