"""An item's one state, made from what its session record, its ledger and its harness say: the
first rule that holds wins, and every state has its badge, its tone and what to do, which
docs/operating.md shows as they are."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from domain.fleet import MEANINGS, ItemState, Tone, needs_attention, states_table
from domain.item_facts import held_of, status_of
from domain.ledger import Ledger, Pending, Resolution, Resolved
from domain.model import Comment, PostedRequest, SessionRecord, SessionStatus
from domain.park import Park, ParkCause
from domain.receipts import HarnessState
from domain.refs import WorkItemRef

AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
REF = WorkItemRef.parse("github:acme/widgets#7")
OPERATING = Path(__file__).resolve().parents[2] / "docs" / "operating.md"


def _record(**fields: object) -> SessionRecord:
    return SessionRecord(REF, "claude", "sid", "/w", **fields)  # type: ignore[arg-type]


def _pending(*ids: str) -> tuple[Pending, ...]:
    return tuple(Pending(Comment(cid, REF, "alice", "please", AT)) for cid in ids)


def test_a_parked_item_is_parked_until_its_reset_with_its_cause_not_what_its_idle_harness_says() -> None:
    park = Park(ParkCause.RATE_LIMIT, AT, AT + timedelta(hours=1))

    status = status_of(_record(park=park), Ledger(REF, AT, pending=_pending("5")), harness=HarnessState.IDLE)

    assert (status.state, status.since, status.until, status.why, status.held) == (
        ItemState.PARKED, AT, AT + timedelta(hours=1), "a rate limit", 1
    )  # fmt: skip
    assert status.meaning.tone is Tone.ATTENTION
    line = status.line(AT + timedelta(minutes=3))
    assert (
        line
        == "parked: a rate limit, until 2026-12-01 13:00:00 UTC, since 2026-12-01 12:00:00 UTC (3m), 1 comment held"
    )


def test_a_park_until_an_operator_acts_says_so() -> None:
    park = Park(ParkCause.AUTHENTICATION, AT, None)

    status = status_of(_record(park=park), None, harness=HarnessState.IDLE)

    assert status.state is ItemState.PARKED and "until an operator resumes it" in status.line(AT)


def test_a_resumed_park_no_longer_parks_the_item() -> None:
    park = Park(ParkCause.RATE_LIMIT, AT, AT, resumed_at=AT)

    assert status_of(_record(park=park), None, harness=HarnessState.BUSY).state is ItemState.BUSY


def test_an_open_request_blocks_the_item_on_its_number_since_it_was_posted() -> None:
    asked = (PostedRequest("k1", 3, AT, closed=True), PostedRequest("k2", 4, AT + timedelta(minutes=1)))

    status = status_of(_record(requests=asked), Ledger(REF, AT), harness=HarnessState.BLOCKED)

    assert (status.state, status.request, status.since) == (ItemState.BLOCKED, 4, AT + timedelta(minutes=1))


def test_stop_pause_and_close_say_more_than_a_park_and_stop_more_than_the_close_it_made() -> None:
    parked = _record(park=Park(ParkCause.SERVER_ERROR, AT, AT), status=SessionStatus.CLOSED)

    assert status_of(parked, Ledger(REF, AT, stopped=True)).state is ItemState.STOPPED
    assert status_of(parked, Ledger(REF, AT)).state is ItemState.CLOSED
    assert status_of(_record(park=Park(ParkCause.SERVER_ERROR, AT, AT)), Ledger(REF, AT, paused=True)).state is (
        ItemState.PAUSED
    )


def test_an_abandoned_comment_marks_the_item_until_a_later_one_is_delivered() -> None:
    gone = {"5": Resolved(Resolution.ABANDONED, AT, attempts=3)}
    later = gone | {"6": Resolved(Resolution.DELIVERED, AT + timedelta(minutes=1))}

    status = status_of(_record(), Ledger(REF, AT, resolved=gone), harness=HarnessState.IDLE)

    assert (status.state, status.why, status.since) == (ItemState.ABANDONED, "comment 5", AT)
    assert status_of(_record(), Ledger(REF, AT, resolved=later), harness=HarnessState.IDLE).state is ItemState.IDLE


def test_an_item_no_host_has_a_slot_for_waits_for_one_since_its_wait_began() -> None:
    status = status_of(None, Ledger(REF, AT, pending=_pending("5", "6")), slot_since=AT)

    assert (status.state, status.since, status.held) == (ItemState.WAITING_SLOT, AT, 2)


def test_nothing_holding_it_the_harness_says_the_state_or_where_it_runs() -> None:
    assert status_of(_record(), None, harness=HarnessState.TOOL).state is ItemState.TOOL
    assert status_of(_record(), None, harness=HarnessState.IDLE, here=False).state is ItemState.ELSEWHERE
    assert status_of(None, Ledger(REF, AT)).state is ItemState.NONE


def test_status_lists_what_needs_attention_from_the_store_alone() -> None:
    statuses = {
        "parked": held_of(_record(park=Park(ParkCause.RATE_LIMIT, AT, AT)), None),
        "working": held_of(_record(), None),  # nothing holds it: its harness is not looked at
        "closed": held_of(_record(status=SessionStatus.CLOSED), None),
    }

    assert statuses["working"] is None
    assert list(needs_attention(statuses)) == ["parked"]


def test_every_state_has_its_own_badge_and_a_tone() -> None:
    assert set(MEANINGS) == set(ItemState)
    assert len({m.badge for m in MEANINGS.values()}) == len(MEANINGS)


def test_operating_md_shows_the_table_of_every_state_as_the_domain_has_it() -> None:
    text = OPERATING.read_text(encoding="utf-8")

    assert states_table() in text
    assert all(f"| **{state.meaning.badge}** |" in text for state in ItemState)
