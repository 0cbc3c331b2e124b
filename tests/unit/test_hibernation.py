"""When an idle agent is hibernated: only one with nothing in hand, idle long enough, watched by no one."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from domain.hibernation import Resting, hibernation
from domain.receipts import HarnessState

NOW = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)
IDLE = Resting(HarnessState.IDLE, since=NOW - timedelta(seconds=900), clients=0, can_resume=True)


def test_an_agent_idle_past_the_setting_with_nothing_in_hand_is_hibernated() -> None:
    assert hibernation(IDLE, now=NOW, after_seconds=600).choice
    assert hibernation(replace(IDLE, state=HarnessState.READY), now=NOW, after_seconds=600).choice


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"since": NOW - timedelta(seconds=599)}, "idle 599s of 600s"),
        ({"clients": 1}, "a client is attached to its session"),
        ({"clients": None}, "tmux did not say whether a client is attached"),
        ({"state": HarnessState.BLOCKED}, "harness blocked"),
        ({"state": HarnessState.BUSY}, "harness busy"),
        ({"state": HarnessState.TOOL}, "harness tool"),
        ({"state": HarnessState.STARTING}, "harness starting"),
        ({"parked": True}, "parked: it waits for its API's reset"),
        ({"waiting": True}, "a comment waits for it"),
        ({"can_resume": False}, "its harness cannot resume a conversation"),
        ({"since": None}, "no time of its last receipt"),
    ],
)
def test_an_agent_with_something_in_hand_or_watched_or_that_cannot_resume_is_never_hibernated(
    change: dict[str, object], why: str
) -> None:
    decision = hibernation(replace(IDLE, **change), now=NOW, after_seconds=600)  # type: ignore[arg-type]
    assert (decision.choice, decision.reason) == (False, why)


def test_hibernation_off_ends_nothing() -> None:
    assert not hibernation(IDLE, now=NOW, after_seconds=None).choice
