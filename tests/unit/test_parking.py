"""The parking rules: what a failed turn parks the item for, and until when."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from adapters.harnesses.opencode.plugin import source
from domain.model import CommentKind
from domain.park import FailedTurn, Park, ParkCause
from domain.parking import DEFAULT_WAIT, OTHER_WAIT, failed_turn, park, park_line, reset_named
from domain.receipts import Receipt, ReceiptKind

NOW = datetime(2026, 12, 1, 15, 0, tzinfo=UTC)
ONE = FailedTurn("1", CommentKind.ISSUE_COMMENT)
TWO = FailedTurn("2", CommentKind.ISSUE_COMMENT)


def test_a_rate_limit_naming_no_reset_waits_the_default_five_minutes() -> None:
    decided = park("rate_limit", "API Error: Request rejected (429) · limited", comment=ONE, now=NOW, previous=None)
    assert decided.choice == Park(
        ParkCause.RATE_LIMIT, NOW, NOW + timedelta(minutes=5), (ONE,), 300.0, detail="rate_limit"
    )
    assert "no reset named" in decided.reason


def test_a_reset_named_in_the_error_is_the_end_of_the_park() -> None:
    reset = NOW + timedelta(minutes=37)
    decided = park(
        "rate_limit", f"limit reached; resets at {reset:%Y-%m-%dT%H:%M:%SZ}", comment=ONE, now=NOW, previous=None
    )
    assert decided.choice.until == reset
    assert reset_named("please retry-after: 90 seconds", now=NOW) == NOW + timedelta(seconds=90)
    assert reset_named("no time here, 2026 was a year", now=NOW) is None


def test_an_authentication_failure_parks_until_an_operator_acts() -> None:
    decided = park("authentication_failed", "API Error: 401", comment=ONE, now=NOW, previous=None)
    assert decided.choice.until is None and decided.choice.cause.waits_for_operator
    assert not decided.choice.due(NOW + timedelta(days=30))


def test_a_second_turn_failing_in_the_same_episode_joins_it_without_a_new_time() -> None:
    first = park("rate_limit", "", comment=ONE, now=NOW, previous=None).choice
    second = park("server_error", "", comment=TWO, now=NOW + timedelta(seconds=3), previous=first).choice
    assert second == Park(first.cause, first.since, first.until, (ONE, TWO), first.wait_seconds, detail="rate_limit")


def test_a_failure_right_after_a_resume_doubles_the_wait_and_a_later_one_does_not() -> None:
    first = park("server_error", "", comment=ONE, now=NOW, previous=None).choice
    resumed = Park(
        first.cause, first.since, first.until, (ONE,), first.wait_seconds, resumed_at=NOW + timedelta(minutes=1)
    )
    again = park("server_error", "", comment=None, now=NOW + timedelta(minutes=2), previous=resumed).choice
    assert again.wait_seconds == 120.0 and again.comments == (ONE,)
    thrice = park("server_error", "", comment=None, now=NOW + timedelta(minutes=5), previous=Park(
        again.cause, again.since, again.until, again.comments, again.wait_seconds, resumed_at=NOW + timedelta(minutes=4)
    )).choice  # fmt: skip
    assert thrice.wait_seconds == 240.0
    later = park("server_error", "", comment=None, now=NOW + timedelta(hours=1), previous=resumed).choice
    assert later.wait_seconds == 60.0


def test_the_wait_never_passes_six_hours() -> None:
    resumed = Park(ParkCause.RATE_LIMIT, NOW, NOW, (), 5 * 3600.0, resumed_at=NOW)
    assert park("rate_limit", "", comment=None, now=NOW, previous=resumed).choice.wait_seconds == 6 * 3600.0


def test_the_failed_turn_is_the_one_of_its_prompt_in_queue_order() -> None:
    def r(kind: ReceiptKind, prompt: str = "") -> Receipt:
        return Receipt(kind, key=prompt or kind.value, prompt=prompt)

    receipts = [
        r(ReceiptKind.PROMPT, "A"),
        r(ReceiptKind.PROMPT, "B"),
        r(ReceiptKind.TURN_ENDED),
        r(ReceiptKind.TURN_FAILED),
    ]
    assert failed_turn(receipts, "A") is None
    assert failed_turn(receipts, "B") is receipts[3]


def test_a_park_reads_as_until_when_and_for_how_long() -> None:
    parked = park("rate_limit", "", comment=ONE, now=NOW, previous=None).choice
    assert (
        park_line(parked, NOW + timedelta(seconds=150)) == "parked (rate_limit) until 2026-12-01 15:05:00 UTC, for 2m"
    )
    assert park_line(None, NOW) == ""


def test_claude_codes_stop_failure_hook_is_a_turn_failed_receipt_with_its_error_and_text() -> None:
    from adapters.receipts.hook_json import receipt_of

    text = (  # as Claude Code 2.1.328 gave it (tests/claude/test_claude_limit_facts.py)
        '{"session_id": "b0c3", "prompt_id": "6538", "hook_event_name": "StopFailure", "error": "rate_limit",'
        ' "last_assistant_message": "API Error: Request rejected (429) \\u00b7 scripted limit"}'
    )
    receipt = receipt_of("1796100000000000000-1", text)
    assert receipt is not None and receipt.kind is ReceiptKind.TURN_FAILED
    assert (receipt.detail, receipt.message) == ("rate_limit", "API Error: Request rejected (429) · scripted limit")


def test_each_cause_waits_by_default_as_long_as_its_kind_asks() -> None:
    waits = {cause: DEFAULT_WAIT.get(cause, OTHER_WAIT) for cause in ParkCause}
    assert waits == {
        ParkCause.RATE_LIMIT: timedelta(minutes=5),
        ParkCause.SERVER_ERROR: timedelta(minutes=1),
        ParkCause.AUTHENTICATION: OTHER_WAIT,
        ParkCause.OTHER: OTHER_WAIT,
    }


def test_the_opencode_plugin_names_each_park_cause_by_the_word_parking_reads() -> None:
    # the plugin's `kind(error)` is JavaScript: a cause renamed or added here must be renamed or added there
    kind = re.search(r"^function kind\(error\) \{\n(.*?)^\}", source(), re.DOTALL | re.MULTILINE)
    assert kind is not None
    *named, fallback = re.findall(r'return "([a-z_]+)"', kind.group(1))
    assert sorted(ParkCause(word).name for word in named) == sorted(
        c.name for c in ParkCause if c is not ParkCause.OTHER
    )
    assert ParkCause.of(fallback) is ParkCause.OTHER
