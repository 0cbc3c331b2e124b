"""The domain's enums where they cross a boundary: each writes the very string the wire held
before it was an enum, and reads back from it to the same member."""

from __future__ import annotations

import json

import pytest

from adapters.eventlog.writer import encode
from app.web.states import STATES
from domain.asks import WaitingOn
from domain.events import Event
from domain.fleet import Facts, ItemState, item_status
from domain.receipts import HarnessState
from domain.webhook import Refusal

WAITING_WORDS = {WaitingOn.PERMISSION: "permission", WaitingOn.QUESTION: "question", WaitingOn.DIALOG: "dialog"}


@pytest.mark.parametrize(("on", "word"), WAITING_WORDS.items())
def test_what_a_blocked_agent_waits_on_is_the_same_word_in_the_event_log_and_reads_back(
    on: WaitingOn, word: str
) -> None:
    line = encode({"waiting_on": on})
    assert line == f'{{"waiting_on": "{word}"}}\n'.encode()
    assert WaitingOn(json.loads(line)["waiting_on"]) is on
    assert json.dumps({"on": on}) == f'{{"on": "{word}"}}'  # the sessions list's JSON


def test_an_items_state_is_the_same_word_in_the_pages_json_and_reads_back() -> None:
    words = {state: json.loads(json.dumps({"state": state}))["state"] for state in ItemState}
    assert words == {state: state.value for state in ItemState}
    assert {ItemState(word) for word in words.values()} == set(ItemState)
    held = {"parked", "waiting_slot", "paused", "stopped", "abandoned"}
    assert {s.value for s in ItemState} == {h.value for h in HarnessState} | held | {
        "closed",
        "elsewhere",
        "none",
        "hibernated",
    }


def test_an_item_here_shows_its_harness_state_by_the_same_word() -> None:
    shown = {h: item_status(Facts(harness=h)).state for h in HarnessState}
    assert all(state.value == harness.value for harness, state in shown.items())


def test_every_item_state_has_its_badge_on_the_page() -> None:
    assert set(STATES) == set(ItemState)


REFUSAL_WORDS = {
    Refusal.MALFORMED: "malformed",
    Refusal.BAD_SIGNATURE: "bad-signature",
    Refusal.NOT_POST: "not-post",
    Refusal.TIMEOUT: "timeout",
    Refusal.NO_LENGTH: "no-length",
    Refusal.TOO_LARGE: "too-large",
    Refusal.HEAD_TOO_LARGE: "head-too-large",
    Refusal.TOO_MANY_CONNECTIONS: "too-many-connections",
}


@pytest.mark.parametrize(("refusal", "word"), REFUSAL_WORDS.items())
def test_why_the_webhook_receiver_refused_is_the_same_word_in_the_event_log_and_reads_back(
    refusal: Refusal, word: str
) -> None:
    line = encode({"reason": refusal})
    assert line == f'{{"reason": "{word}"}}\n'.encode()
    assert Refusal(json.loads(line)["reason"]) is refusal
    assert set(REFUSAL_WORDS) == set(Refusal)


def test_every_event_reads_back_from_its_name_in_the_log_and_an_unknown_name_reads_as_none() -> None:
    read = {Event.named(json.loads(encode({"event": event}))["event"]) for event in Event}
    assert read == set(Event)
    assert (Event.named("poll.cycle"), Event.named("poll.no_such_event"), Event.named(["poll.cycle"])) == (
        Event.POLL_CYCLE,
        None,
        None,
    )
