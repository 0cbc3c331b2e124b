"""What holds a waiting comment, and whether a delivered one's turn failed: pure reads of the item's
ledger, its session record and the events that name the comment."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from domain.holds import HeldBy, hold, turn_failed
from domain.ledger import Ledger, Resolution, Resolved
from domain.model import ClosedBy, SessionRecord, SessionStatus
from domain.park import ParkCause
from domain.refs import WorkItemRef

AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
REF = WorkItemRef.parse("github:acme/widgets#7")


def _record(**fields: object) -> SessionRecord:
    return SessionRecord(REF, "claude", "sid", "/w", **fields)  # type: ignore[arg-type]


def test_a_pause_no_control_comment_explains_came_from_the_fleet_page() -> None:
    resumed = {
        "9": Resolved(Resolution.CONTROL, AT, reason="pause"),
        "10": Resolved(Resolution.CONTROL, AT + timedelta(1), reason="resume"),
    }
    ledger = Ledger(REF, AT, resolved=resumed, paused=True)

    held = hold(ledger, None)

    assert held is not None and held.by is HeldBy.PAUSED and held.pause_comment is None
    assert "paused from the fleet page" in held.said()


def test_an_item_no_host_has_a_slot_for_holds_its_comments_since_the_wait_began() -> None:
    held = hold(Ledger(REF, AT), _record(), slot_since=AT)

    assert held is not None and held.as_json() == {"by": "slot", "since": AT.isoformat()}


def test_a_session_an_operator_closed_says_what_reopens_it() -> None:
    held = hold(Ledger(REF, AT), _record(status=SessionStatus.CLOSED, closed_by=ClosedBy.OPERATOR))

    assert held is not None and held.by is HeldBy.CLOSED and "`sessions reopen`" in held.said()


def test_a_turn_failed_whose_park_is_over_is_told_from_the_event_that_parked_it() -> None:
    parked = {"event": "session.parked", "comment_id": "5", "cause": "server_error", "until": AT.isoformat()}

    failed = turn_failed("5", _record(), [parked])

    assert failed is not None and (failed.cause, failed.until, failed.parked) == (ParkCause.SERVER_ERROR, AT, False)
    assert "the item was parked (server_error) until 2026-12-01 12:00:00 UTC" in failed.said()
    assert turn_failed("6", _record(), [parked]) is None
