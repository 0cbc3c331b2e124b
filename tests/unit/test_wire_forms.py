"""The domain's enums where they cross a boundary: each writes the very string the wire held
before it was an enum, and reads back from it to the same member."""

from __future__ import annotations

import json

import pytest

from adapters.eventlog.writer import encode
from domain.asks import WaitingOn

WAITING_WORDS = {WaitingOn.PERMISSION: "permission", WaitingOn.QUESTION: "question", WaitingOn.DIALOG: "dialog"}


@pytest.mark.parametrize(("on", "word"), WAITING_WORDS.items())
def test_what_a_blocked_agent_waits_on_is_the_same_word_in_the_event_log_and_reads_back(
    on: WaitingOn, word: str
) -> None:
    line = encode({"waiting_on": on})
    assert line == f'{{"waiting_on": "{word}"}}\n'.encode()
    assert WaitingOn(json.loads(line)["waiting_on"]) is on
    assert json.dumps({"on": on}) == f'{{"on": "{word}"}}'  # the sessions list's JSON
