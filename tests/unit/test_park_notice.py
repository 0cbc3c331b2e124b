"""The park notice: the cause, the rule that set its end, and — edited when the park ends — what
ended it; never a word of a comment or of the error's text."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from domain.model import CommentKind
from domain.notice import parked_notice
from domain.park import FailedTurn, ParkRule, Unpark
from domain.parking import park
from domain.refs import RepoRef, WorkItemRef

NOW = datetime(2026, 12, 1, 15, 0, tzinfo=UTC)
ONE = FailedTurn("1", CommentKind.ISSUE_COMMENT)
ITEM = WorkItemRef(RepoRef("github.com", "acme", "app"), 7)


def test_a_park_whose_error_named_no_reset_says_the_default_wait_of_its_cause_not_the_reset() -> None:
    parked = park("rate_limit", "API Error: Request rejected (429)", comment=ONE, now=NOW, previous=None).choice

    body = parked_notice(ITEM, parked)

    assert parked.rule is ParkRule.DEFAULT_WAIT
    assert "**a rate limit** (`rate_limit`)" in body
    assert "no reset was named: the default wait of 5m for a rate limit" in body
    assert "15:05:00 UTC" in body and "reset the API named" not in body


def test_a_park_until_the_reset_the_error_names_says_the_api_named_it() -> None:
    reset = NOW + timedelta(minutes=37)
    message = f"limit reached; resets at {reset:%Y-%m-%dT%H:%M:%SZ}"
    parked = park("rate_limit", message, comment=ONE, now=NOW, previous=None).choice

    body = parked_notice(ITEM, parked)

    assert parked.rule is ParkRule.NAMED_RESET
    assert "until **2026-12-01 15:37:00 UTC** (the reset the API named)" in body
    assert "no reset was named" not in body and "limit reached" not in body


def test_a_server_error_park_names_its_cause_and_its_own_default_wait() -> None:
    parked = park("server_error", "API Error: Repeated 529 Overloaded errors.", comment=ONE, now=NOW, previous=None)

    body = parked_notice(ITEM, parked.choice)

    assert "**a server error** (`server_error`)" in body
    assert "no reset was named: the default wait of 1m for a server error" in body
    assert "Overloaded" not in body


def test_a_failure_right_after_a_resume_says_the_wait_doubled() -> None:
    first = park("server_error", "", comment=ONE, now=NOW, previous=None).choice
    resumed = replace(first, resumed_at=NOW + timedelta(minutes=1))
    again = park("server_error", "", comment=None, now=NOW + timedelta(minutes=2), previous=resumed).choice

    assert again.rule is ParkRule.DOUBLED
    assert "failed again right after a resume: twice the last wait, 2m" in parked_notice(ITEM, again)


def test_the_ended_park_keeps_its_notice_and_says_when_and_by_what_it_ended() -> None:
    parked = park("rate_limit", "", comment=ONE, now=NOW, previous=None).choice
    at = NOW + timedelta(minutes=5, seconds=12)

    by_reset = parked_notice(ITEM, parked, ended=(at, Unpark.RESET))
    by_operator = parked_notice(ITEM, parked, ended=(at, Unpark.RESUME))

    assert by_reset.startswith(parked_notice(ITEM, parked).rstrip("\n"))
    assert "**Unparked** at 2026-12-01 15:05:12 UTC: the reset was reached" in by_reset
    assert "**Unparked** at 2026-12-01 15:05:12 UTC: an operator's `the-loop resume`" in by_operator
