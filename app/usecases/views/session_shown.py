"""What `sessions list` shows of one session, made once for both of its paths: the full one
(`SessionView`, app.usecases.views.session_listing) and the lean one (app.cli.lean_listing),
which reads the store's rows without the domain model and so holds no `SessionRecord`.

Both hand these functions an object of the `Shown` shape. Imports the standard library only (the
lean start depends on it).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from domain.asks import Waiting
    from domain.fleet import ItemStatus
    from domain.receipts import Receipt
    from domain.refs import WorkItemRef

STOPPED = "stopped"  # `sessions list --status stopped`: an item `the-loop stop` holds
PAUSED = "paused"  # SessionStatus.PAUSED's value (a test keeps them equal)


class Valued(Protocol):
    @property
    def value(self) -> str: ...


class Named(Protocol):
    @property
    def name(self) -> str: ...


class ShownRecord(Protocol):
    """What is shown of a session record (a `SessionRecord`, or the lean path's row)."""

    @property
    def item(self) -> object: ...
    @property
    def harness(self) -> str: ...
    @property
    def harness_session_id(self) -> str: ...
    @property
    def target(self) -> Named: ...
    @property
    def pane_id(self) -> str: ...
    @property
    def status(self) -> Valued: ...
    @property
    def closed_by(self) -> Valued | None: ...
    @property
    def last_event(self) -> str: ...
    @property
    def updated_at(self) -> datetime | None: ...
    @property
    def rss_bytes(self) -> int | None: ...
    @property
    def cwd(self) -> str: ...


class Shown(Protocol):
    """One session as looked at: its record, what tmux says of its harness's pane, what its receipts say."""

    @property
    def record(self) -> ShownRecord: ...
    @property
    def state(self) -> Valued: ...
    @property
    def harness(self) -> Valued: ...
    @property
    def last_receipt(self) -> Receipt | None: ...
    @property
    def host(self) -> str: ...
    @property
    def here(self) -> bool: ...
    @property
    def paused(self) -> bool: ...
    @property
    def stopped(self) -> bool: ...
    @property
    def waiting(self) -> Waiting | None: ...
    @property
    def now(self) -> datetime | None: ...
    @property
    def parked(self) -> str: ...
    @property
    def shows(self) -> ItemStatus | None: ...
    @property
    def spent(self) -> Spend | None: ...


# what an item's turns cost so far: micro-dollars (estimated), tokens, turns, turns with a price
Spend = tuple[int, int, int, int]


class _Blank:
    """No value: what a held item without a session has for each of a session's (shown as "-", or null)."""

    __slots__ = ()
    value = ""
    name = ""


class NoSession:
    """The record of an item `the-loop pause` / `the-loop stop` holds that has no session (never spawned,
    or its record dropped): only its work item is known. A `ShownRecord`."""

    __slots__ = ("item",)
    harness = harness_session_id = pane_id = last_event = cwd = ""
    target = status = _Blank()
    closed_by = None
    updated_at = None
    rss_bytes = None

    def __init__(self, item: WorkItemRef) -> None:
        self.item = item


class HeldItem:
    """A held item without a session as `sessions list` shows it: one row, "no session", its hold (a `Shown`)."""

    __slots__ = ("here", "paused", "record", "shows", "stopped")
    state = harness = _Blank()
    spent = None
    last_receipt = None
    waiting = None
    now = None
    parked = ""
    host = ""

    def __init__(self, item: WorkItemRef, *, paused: bool, stopped: bool, here: bool = True) -> None:
        from domain.fleet import Facts, item_status

        self.record, self.paused, self.stopped, self.here = NoSession(item), paused, stopped, here
        self.shows: ItemStatus | None = item_status(Facts(session=False, paused=paused, stopped=stopped))


def has_session(view: Shown) -> bool:
    """Whether the view is of a session (not of a held item without one)."""
    return not isinstance(view.record, NoSession)


def status_text(view: Shown) -> str:
    """What holds the item, as the operator reads it: its ledger's pause or stop first."""
    if view.stopped:
        return "stopped (control)"
    if view.paused:
        return "paused (control)"
    record = view.record
    return record.status.value + (f" ({record.closed_by.value})" if record.closed_by else "")


def state_text(view: Shown) -> str:
    """The item's state, as the page, `status`, the status reply and `why` say it."""
    shows = view.shows
    if shows is None:
        return ""
    return shows.line(view.now) if view.now is not None else shows.meaning.badge


def has_status(view: Shown, wanted: str) -> bool:
    """`sessions list --status`: paused matches a paused record or item, stopped a stopped item."""
    if wanted == STOPPED:
        return view.stopped
    return view.record.status.value == wanted or (wanted == PAUSED and view.paused)


def shown_json(view: Shown) -> dict[str, Any]:
    """One session as a `sessions list --json` object (before the host's and the command's fields)."""
    record, receipt = view.record, view.last_receipt
    cluster = {"host": view.host or None, "here": view.here} if view.host or not view.here else {}
    if not has_session(view):
        return {**cluster, **dict.fromkeys(_KEYS), "work_item": str(record.item)} | {
            "paused": view.paused,
            "stopped": view.stopped,
            "item_state": view.shows.as_json() if view.shows else None,
        }
    return {
        **cluster,
        "work_item": str(record.item),
        "harness": record.harness,
        "conversation_id": record.harness_session_id,
        "target": record.target.name,
        "pane": record.pane_id,
        "state": view.state.value,
        "harness_state": view.harness.value,
        "last_receipt": None
        if receipt is None
        else {"kind": receipt.kind.value, "at": receipt.at.isoformat() if receipt.at else None},
        "status": record.status.value,
        "closed_by": record.closed_by.value if record.closed_by else None,
        "paused": view.paused,
        "stopped": view.stopped,
        "parked": view.parked or None,
        "last_event": record.last_event,
        "updated_at": record.updated_at.isoformat() if record.updated_at else None,
        "cwd": record.cwd,
        "waiting": None if view.waiting is None else _waiting(view.waiting, view.now),
        "item_state": view.shows.as_json() if view.shows else None,
        "spent": spent_json(view.spent),
    }


_KEYS = (  # shown_json's keys after the host's, in its order
    "work_item",
    "harness",
    "conversation_id",
    "target",
    "pane",
    "state",
    "harness_state",
    "last_receipt",
    "status",
    "closed_by",
    "paused",
    "stopped",
    "parked",
    "last_event",
    "updated_at",
    "cwd",
    "waiting",
    "item_state",
    "spent",
)


def _waiting(waiting: Waiting, now: datetime | None) -> dict[str, Any]:
    seconds = waiting.seconds(now) if now else None
    return {
        "on": waiting.on.value,
        "tool": waiting.tool or None,
        "since": waiting.since.isoformat() if waiting.since else None,
        "seconds": round(seconds, 1) if seconds is not None else None,
    }


def spent_json(spent: Spend | None) -> dict[str, Any] | None:
    """An item's running total as `--json` gives it (money estimated; null when no price was known)."""
    if spent is None or not spent[2]:
        return None
    micro, tokens, turns, priced = spent
    return {"usd_estimated": micro / 1_000_000 if priced else None, "tokens": tokens, "turns": turns}


def spent_text(spent: Spend | None) -> str:
    """`$0.0123 est.` (four places below a dollar), `12,345 tokens` when no turn had a price; "" for none."""
    if spent is None or not spent[2]:
        return ""
    micro, tokens, _, priced = spent
    if not priced:
        return f"{tokens:,} tokens"
    dollars = micro / 1_000_000
    return f"${dollars:.4f} est." if dollars < 1 else f"${dollars:,.2f} est."
