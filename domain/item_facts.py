"""What the store knows of one item, as the facts its state is made from (`domain.fleet.item_status`):
its session record (closed, parked, the requests its agent posted), its ledger (paused, stopped, a
comment given up, the comments waiting) and, from the caller, what its harness does."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from domain.fleet import Abandoned, Asked, Facts, ItemStatus, Parked, held_status, item_status
from domain.ledger import Ledger, Resolution
from domain.model import SessionRecord, SessionStatus
from domain.receipts import HarnessState

if TYPE_CHECKING:
    from domain.asks import Waiting


def item_facts(
    record: SessionRecord | None,
    ledger: Ledger | None,
    *,
    harness: HarnessState = HarnessState.UNKNOWN,
    here: bool = True,
    waiting: Waiting | None = None,
    slot_since: datetime | None = None,
) -> Facts:
    park = record.park if record is not None else None
    asked = (
        sorted((r for r in record.requests if not r.closed and not r.pending), key=lambda r: r.number) if record else []
    )
    return Facts(
        harness=harness,
        here=here,
        session=record is not None,
        closed=record is not None and record.status is SessionStatus.CLOSED,
        stopped=bool(ledger and ledger.stopped),
        paused=bool(ledger and ledger.paused),
        parked=Parked(park.cause.words, park.since, park.until) if park is not None and not park.resuming else None,
        asked=Asked(asked[0].number, asked[0].posted_at) if asked else None,
        waiting=waiting,
        slot_since=slot_since,
        abandoned=abandoned(ledger) if ledger is not None else None,
        held=len(ledger.pending) if ledger is not None else 0,
        hibernated=record.hibernated_at if record is not None else None,
    )


def status_of(
    record: SessionRecord | None,
    ledger: Ledger | None,
    *,
    harness: HarnessState = HarnessState.UNKNOWN,
    here: bool = True,
    waiting: Waiting | None = None,
    slot_since: datetime | None = None,
) -> ItemStatus:
    """The item's state, from its record, its ledger and what its harness does."""
    return item_status(item_facts(record, ledger, harness=harness, here=here, waiting=waiting, slot_since=slot_since))


def abandoned(ledger: Ledger) -> Abandoned | None:
    """The last comment given up, when no comment was delivered after it."""
    gone = [(r.at, cid) for cid, r in ledger.resolved.items() if r.kind is Resolution.ABANDONED]
    if not gone:
        return None
    at, comment_id = max(gone)
    delivered = [r.at for r in ledger.resolved.values() if r.kind is Resolution.DELIVERED]
    return None if delivered and max(delivered) > at else Abandoned(comment_id, at)


def held_of(
    record: SessionRecord | None, ledger: Ledger | None, *, slot_since: datetime | None = None
) -> ItemStatus | None:
    """What the store alone says of the item's state (`status`, `why`); None: nothing holds it."""
    return held_status(item_facts(record, ledger, slot_since=slot_since))
