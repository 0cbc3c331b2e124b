"""The sessions table read for a listing only (the lean `sessions list`): of each
record, the fields the listing shows and looks with, decoded as `state_codec.decode_session` decodes
them (its defaults for older rows, its refusals), and of each ledger whether it is paused or stopped,
without the domain model's dataclasses or the ledger's codec (the few the full decoding needs are
imported only for a record that is parked, `ListedSession.full`).

Imports the standard library and the domain's refs only. A row decode_session would refuse raises
here too (ValueError, KeyError, TypeError): the listing's caller then takes the full path, which says so.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime
from typing import TYPE_CHECKING, Any

from domain.refs import Naming, TmuxTarget, WorkItemRef

if TYPE_CHECKING:
    from domain.ledger import Ledger
    from domain.model import SessionRecord

STATUSES = ("active", "paused", "closed")  # SessionStatus's values (a test keeps them equal)
CLOSERS = ("upstream", "operator", "control")  # ClosedBy's values (a test keeps them equal)


class Word:
    """One value of a domain enum as the row holds it: what is shown of it is its `value`."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value


class ListedSession:
    """One session record as a listing reads it (the `ShownRecord` of app.usecases.views.session_shown)."""

    __slots__ = (
        "_text",
        "_version",
        "closed_by",
        "cwd",
        "harness",
        "harness_session_id",
        "hibernated_at",
        "item",
        "last_event",
        "naming",
        "pane_id",
        "parked",
        "rss_bytes",
        "spawn_id",
        "spawned_at",
        "spawned_monotonic",
        "status",
        "updated_at",
    )

    def __init__(self, text: str, version: int) -> None:
        data: dict[str, Any] = json.loads(text)
        self._text, self._version = text, version
        self.item = WorkItemRef.parse(data["item"])
        self.harness: str = data["harness"]
        self.harness_session_id: str = data["harness_session_id"]
        self.cwd: str = data["cwd"]
        status = data["status"]
        if status not in STATUSES:
            raise ValueError(f"not a session status: {status!r}")
        self.status = Word(status)
        tuple(data["recent_delivery_ids"])
        _when(data["created_at"])
        self.updated_at = _when(data["updated_at"])
        self.last_event: str = data["last_event"]
        self.pane_id: str = data.get("pane_id", "")
        self.spawn_id: str = data.get("spawn_id", "")
        self.spawned_at = _when(data.get("spawned_at"))
        self.spawned_monotonic: float | None = data.get("spawned_monotonic")
        self.hibernated_at = _when(data.get("hibernated_at"))
        self.rss_bytes: int | None = data.get("rss_bytes")
        for request in data.get("requests", ()):  # as the codec decodes them: a bad one fails the row
            _when(request["posted_at"])
            int(request["number"])
        closed_by = data.get("closed_by")
        if closed_by and closed_by not in CLOSERS:
            raise ValueError(f"not a closer: {closed_by!r}")
        if not closed_by and status == "closed" and "closed_by" not in data:
            closed_by = "operator"  # closed before `closed_by` existed: the operator's close holds
        self.closed_by = Word(closed_by) if closed_by else None
        self.naming = Naming(data.get("naming", Naming.LEGACY.value))
        self.parked = bool(data.get("park"))

    @property
    def target(self) -> TmuxTarget:
        return TmuxTarget.for_slug(self.item.slug_by(self.naming))

    def full(self) -> SessionRecord:
        """The whole record, decoded as the store decodes it (for a parked record: its park)."""
        from adapters.sql.state_codec import decode_session

        return decode_session(self._text, version=self._version)


def _when(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


def listed_sessions(db: sqlite3.Connection) -> list[ListedSession]:
    """Every session record, in the order of their items (as `StateStore.sessions` gives them)."""
    rows = db.execute("SELECT data, version FROM sessions").fetchall()
    return sorted((ListedSession(str(text), int(version)) for text, version in rows), key=lambda row: row.item)


def held(db: sqlite3.Connection, item: WorkItemRef) -> tuple[bool, bool, int]:
    """Whether `the-loop pause` / `the-loop stop` holds the item's comments, and how many wait (its
    ledger; none: neither, and none)."""
    row = db.execute("SELECT data FROM ledgers WHERE item = ?", (str(item),)).fetchone()
    if row is None:
        return False, False, 0
    data = json.loads(row[0])
    return bool(data.get("paused", False)), bool(data.get("stopped", False)), len(data["pending"])


def held_items(db: sqlite3.Connection) -> list[tuple[WorkItemRef, bool, bool]]:
    """Every item `the-loop pause` / `the-loop stop` holds that has no session record:
    (the item, paused, stopped), read from its ledger as `held` reads one."""
    rows = db.execute("SELECT item, data FROM ledgers WHERE item NOT IN (SELECT item FROM sessions)").fetchall()
    found = []
    for item, text in rows:
        data = json.loads(text)
        paused, stopped = bool(data.get("paused", False)), bool(data.get("stopped", False))
        if paused or stopped:
            found.append((WorkItemRef.parse(str(item)), paused, stopped))
    return found


SLOT_WAIT = "slot-wait:"  # app.usecases.cluster.slot_wait.KEY (a test keeps them equal)


def held_rows(
    db: sqlite3.Connection, *, flags: bool = True
) -> tuple[list[tuple[str, SessionRecord | None, Ledger | None]], dict[str, datetime]]:
    """The rows of each item they say something holds — a park, an open request, a comment given up,
    a wait for a slot, and (with `flags`) a pause or a stop — decoded whole as the store decodes them
    (the others are left undecoded), and since when each item waits for a slot."""
    sessions = {
        str(item): (str(text), int(v)) for item, text, v in db.execute("SELECT item, data, version FROM sessions")
    }
    ledgers = {
        str(item): (str(text), int(v)) for item, text, v in db.execute("SELECT item, data, version FROM ledgers")
    }
    slots = {}
    for key, value in db.execute(
        "SELECT key, value FROM meta WHERE substr(key, 1, ?) = ?", (len(SLOT_WAIT), SLOT_WAIT)
    ):
        if value:
            slots[str(key)[len(SLOT_WAIT) :]] = datetime.fromisoformat(json.loads(value)["since"])
    held = sorted(
        {item for item, (text, _) in sessions.items() if _session_holds(json.loads(text))}
        | {item for item, (text, _) in ledgers.items() if (_ledger_holds if flags else _given_up)(json.loads(text))}
        | set(slots),
        key=WorkItemRef.parse,
    )
    if not held:
        return [], slots
    from adapters.sql.state_codec import decode_ledger, decode_session

    found = []
    for item in held:
        session, ledger = sessions.get(item), ledgers.get(item)
        found.append(
            (
                item,
                decode_session(session[0], version=session[1]) if session else None,
                decode_ledger(ledger[0], version=ledger[1]) if ledger else None,
            )
        )
    return found, slots


def _session_holds(data: dict[str, Any]) -> bool:
    requests = data.get("requests", ())
    return bool(data.get("park")) or any(not r.get("closed") and not r.get("pending") for r in requests)


def _ledger_holds(data: dict[str, Any]) -> bool:
    return bool(data.get("paused") or data.get("stopped") or data.get("abandoned"))


def _given_up(data: dict[str, Any]) -> bool:
    return bool(data.get("abandoned"))


def spent_of(db: sqlite3.Connection, item: WorkItemRef) -> tuple[int, int, int, int]:
    """What the item's turns cost, as `StateStore.spent(item=...)` sums it: micro-dollars, tokens,
    turns, and turns with a price."""
    row = db.execute(
        "SELECT COALESCE(SUM(micro_dollars), 0), COALESCE(SUM(tokens_in + tokens_out + cache_write + cache_read), 0),"
        " COUNT(*), COUNT(micro_dollars) FROM turn_costs WHERE item = ?",
        (str(item),),
    ).fetchone()
    return int(row[0]), int(row[1]), int(row[2]), int(row[3])
