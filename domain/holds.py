"""What holds a waiting comment (`the-loop why`): the rule or state of its item — stopped, closed,
paused, parked, a request the agent waits on, no free slot — read from its ledger and session record;
and, for a delivered comment, whether its turn then failed on the API."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from domain.events import Event
from domain.ledger import Ledger, Resolution
from domain.model import ClosedBy, SessionRecord, SessionStatus
from domain.park import ParkCause
from domain.parking import parked_until

Record = Mapping[str, Any]


class HeldBy(enum.StrEnum):
    """The rule or state that holds a comment; its value is `why --json`'s `held.by`."""

    STOPPED = "stopped"
    CLOSED = "closed"
    PAUSED = "paused"
    PARKED = "parked"
    REQUEST = "request"  # the agent waits on a request posted on the item
    SLOT = "slot"  # every host is at cluster.maxSessions


@dataclass(frozen=True, slots=True, kw_only=True)
class Hold:
    by: HeldBy
    cause: ParkCause | None = None
    until: datetime | None = None
    since: datetime | None = None
    request: int | None = None
    pause_comment: str | None = None  # the control comment that paused the item, when the ledger holds it
    closed_by: ClosedBy | None = None

    def said(self) -> str:
        if self.by is HeldBy.PARKED:
            assert self.cause is not None
            return f"the item is {parked_until(self.cause, self.until)}; it goes after the resume prompt at the reset"
        if self.by is HeldBy.REQUEST:
            return (
                f"the agent waits on request {self.request}, posted on the item {self.since:%Y-%m-%d %H:%M:%S} UTC "
                f"(answer it there: `the-loop allow {self.request}` / `deny {self.request}` / "
                f"`answer {self.request} <option>`)"
            )
        if self.by is HeldBy.PAUSED:
            by = f"by comment {self.pause_comment} (`the-loop pause`)" if self.pause_comment else "from the fleet page"
            return f"the item is paused {by}; it goes right after `the-loop resume`"
        if self.by is HeldBy.SLOT:
            return f"waiting for a free slot (every host at cluster.maxSessions) since {self.since:%Y-%m-%d %H:%M:%S}"
        if self.by is HeldBy.STOPPED:
            return "the item is stopped (`the-loop stop`): not delivered until `the-loop start`"
        reopen = {ClosedBy.OPERATOR: "`sessions reopen`", ClosedBy.CONTROL: "`the-loop start`"}
        how = (reopen.get(self.closed_by) if self.closed_by is not None else None) or "the item reopened upstream"
        return f"the item's session is closed; it reopens with {how}"

    def as_json(self) -> dict[str, Any]:
        shown: dict[str, Any] = {"by": self.by.value}
        if self.by is HeldBy.PARKED:
            shown |= {"cause": self.cause.value if self.cause else None, "until": _iso(self.until)}
        elif self.by is HeldBy.REQUEST:
            shown |= {"request": self.request, "posted_at": _iso(self.since)}
        elif self.by is HeldBy.PAUSED:
            shown["pause_comment"] = self.pause_comment
        elif self.by is HeldBy.SLOT:
            shown["since"] = _iso(self.since)
        elif self.by is HeldBy.CLOSED:
            shown["closed_by"] = self.closed_by.value if self.closed_by else None
        return shown


def hold(ledger: Ledger, record: SessionRecord | None, *, slot_since: datetime | None = None) -> Hold | None:
    """What holds the item's waiting comments now, the first rule that does; None when nothing does
    (the comment just waits its turn)."""
    if ledger.stopped:
        return Hold(by=HeldBy.STOPPED)
    if record is not None and record.status is SessionStatus.CLOSED:
        return Hold(by=HeldBy.CLOSED, closed_by=record.closed_by)
    if ledger.paused:
        return Hold(by=HeldBy.PAUSED, pause_comment=_pause_comment(ledger))
    return _session_hold(record, slot_since)


def _session_hold(record: SessionRecord | None, slot_since: datetime | None) -> Hold | None:
    """What holds the comments of an item neither stopped, closed nor paused: its session's state."""
    parked = record.park if record is not None else None
    if parked is not None and not parked.resuming:
        return Hold(by=HeldBy.PARKED, cause=parked.cause, until=parked.until)
    asked = [r for r in record.requests if not r.closed and not r.pending] if record is not None else []
    if asked:
        return Hold(by=HeldBy.REQUEST, request=asked[0].number, since=asked[0].posted_at)
    if slot_since is not None:
        return Hold(by=HeldBy.SLOT, since=slot_since)
    return None


def _pause_comment(ledger: Ledger) -> str | None:
    """The control comment that paused the item: the last `pause`, unless a `resume` came after it
    (then the pause came from the fleet page)."""
    controls = sorted(
        ((r.at, r.reason, comment_id) for comment_id, r in ledger.resolved.items() if r.kind is Resolution.CONTROL),
        key=lambda entry: entry[0],
    )
    last = next((entry for entry in reversed(controls) if entry[1] in {"pause", "resume"}), None)
    return last[2] if last is not None and last[1] == "pause" else None


@dataclass(frozen=True, slots=True)
class TurnFailed:
    """A delivered comment's agent turn failed on the API: the item parked, `until` its reset."""

    cause: ParkCause
    until: datetime | None
    parked: bool = True  # the park still holds the comment: given again at the reset

    def said(self) -> str:
        if self.parked:
            return (
                f"its turn then failed on the API: the item is {parked_until(self.cause, self.until)}, and it is "
                "given again at the reset"
            )
        return f"its turn then failed on the API: the item was {parked_until(self.cause, self.until)}"

    def as_json(self) -> dict[str, Any]:
        return {"cause": self.cause.value, "until": _iso(self.until), "parked": self.parked}


def turn_failed(comment_id: str, record: SessionRecord | None, records: Iterable[Record]) -> TurnFailed | None:
    """Whether the comment's turn failed: its item's park names it, or the event that parked it does."""
    parked = record.park if record is not None else None
    if parked is not None and any(f.comment_id == comment_id for f in parked.comments):
        return TurnFailed(parked.cause, parked.until)
    said = [r for r in records if r.get("event") == Event.SESSION_PARKED.value and r.get("comment_id") == comment_id]
    if not said:
        return None
    until = said[-1].get("until")
    try:
        at = datetime.fromisoformat(until) if isinstance(until, str) else None
    except ValueError:
        at = None
    return TurnFailed(ParkCause.of(str(said[-1].get("cause", ""))), at, parked=False)


def _iso(at: datetime | None) -> str | None:
    return at.isoformat() if at is not None else None
