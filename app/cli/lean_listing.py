"""The lean `sessions list` of recorded sessions: what the full path's
`SessionsListing.listed` shows, read from the store's rows, one `list-panes -a` and the receipt
folders, without the domain model, logging, subprocess, the ledger's codec or the container; and
the items a pause or stop holds that have no session, from their ledgers' rows.

Each part reads as the full path's does: the rows as `state_codec` decodes them
(`adapters.sql.session_rows`), each session's panes as `ShTmux.probe` reads them (the rows and
the harness's pane of `adapters.tmux.panes`), its receipts through the folder reader `FileReceipts`
uses (`adapters.receipts.reading`), the harness's state as `HarnessWatch.state` judges it (below,
with the domain's `harness_state`), what it waits on with the domain's `waiting_on` and a park with
`park_line` (both imported only for a session that is blocked or parked). What is shown of each is
made by `app.usecases.views.session_shown`, as for the full path. Anything that fails raises: the caller
takes the full path. The one module of `app` besides `app.container` and `app.cli.fast_reads` that
imports these adapters (the import-linter contract names it and them).
"""

from __future__ import annotations

import sqlite3
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from adapters.receipts.reading import read_folder, spawn_folder
from adapters.sql.session_rows import ListedSession, Word, held, held_items, held_rows, listed_sessions, spent_of
from adapters.tmux.listing import sessions_panes
from adapters.tmux.panes import PaneRow, harness_row
from app.config.snapshot import Snapshot
from app.usecases.views.session_shown import HeldItem, has_status
from domain.receipts import HarnessState, Receipt, ReceiptMode, harness_state

if TYPE_CHECKING:
    from domain.asks import Waiting
    from domain.fleet import ItemStatus
    from domain.ledger import Ledger
    from domain.model import SessionRecord

PROBE_SECONDS = 10.0  # ShTmux's probe_timeout, as the container leaves it (a test keeps them equal)
LIVE, DEAD, ABSENT, UNKNOWN = "live", "dead", "absent", "unknown"  # SessionState's values (a test keeps them)
_BOOTTIME = getattr(time, "CLOCK_BOOTTIME", time.CLOCK_MONOTONIC)  # as adapters.clock.SystemClock reads it


class LeanView:
    """One session as looked at (the `Shown` of app.usecases.views.session_shown)."""

    __slots__ = (
        "harness", "last_receipt", "now", "parked", "paused", "record", "shows", "spent", "state", "stopped",
        "waiting",
    )  # fmt: skip
    host = ""  # one host: SQLite
    here = True

    def __init__(self, record: ListedSession, state: str, harness: HarnessState, receipts: list[Receipt]) -> None:
        self.record, self.state, self.harness = record, Word(state), harness
        self.last_receipt = receipts[-1] if receipts else None
        self.waiting = _waiting(receipts)
        self.now = datetime.now(UTC)  # noqa: TID251 - as adapters.clock.SystemClock reads it
        self.parked = _parked(record, self.now)
        self.paused = self.stopped = False
        self.shows: ItemStatus | None = None
        self.spent: tuple[int, int, int, int] | None = None


def listing(found: Snapshot, db: sqlite3.Connection, status: str | None = None) -> list[LeanView | HeldItem]:
    """Every session, looked at as the full path's listing looks at it, and every item a pause or stop
    holds without one; `db` is the store opened read-only; `status` as `--status`.
    Raises whatever a part raises."""
    records = listed_sessions(db)
    # a pause or a stop is read from the ledger's row as it is: only a park, a request or a comment
    # given up needs the rows decoded whole
    holding = {item: (record, ledger) for item, record, ledger in held_rows(db, flags=False)[0]}
    panes = sessions_panes(socket_name=found.tmux_socket, timeout=PROBE_SECONDS) if records else {}
    root = found.state_root_path / "receipts"
    views: list[LeanView | HeldItem] = []
    for record in records:
        state = _probed(panes.get(record.target.name), mark=record.spawn_id, pane=record.pane_id)
        receipts = read_folder(spawn_folder(root, record.item, record.spawn_id)) if record.spawn_id else []
        spec = found.harnesses.get(record.harness)
        view = LeanView(
            record, state, _harness(record, state, spec, receipts) if spec else HarnessState.UNKNOWN, receipts
        )
        view.paused, view.stopped, waiting = held(db, record.item)
        view.shows = _shows(view, holding.get(str(record.item)), waiting)
        view.spent = spent_of(db, record.item)
        views.append(view)
    views += [HeldItem(item, paused=paused, stopped=stopped) for item, paused, stopped in held_items(db)]
    views.sort(key=lambda view: view.record.item)  # in the order of their items, as the full path's
    return [view for view in views if status is None or has_status(view, status)]


def _shows(view: LeanView, rows: tuple[SessionRecord | None, Ledger | None] | None, waiting: int) -> ItemStatus:
    """The item's state as the full path makes it: from its rows decoded whole when they say
    something holds it, else from what its harness does (all the rest of its rows could say)."""
    from domain.fleet import Facts, item_status

    if rows is not None:
        from domain.item_facts import status_of

        return status_of(*rows, harness=view.harness, waiting=view.waiting)
    closed = view.record.status.value == "closed"
    facts = Facts(
        harness=view.harness,
        closed=closed,
        paused=view.paused,
        stopped=view.stopped,
        waiting=view.waiting,
        held=waiting,
        hibernated=view.record.hibernated_at,
    )
    return item_status(facts)


def _probed(rows: list[PaneRow] | None, *, mark: str, pane: str) -> str:
    """What `probe_of` says of the harness's pane (`Probe.harness`); None: tmux holds no such session."""
    if rows is None:
        return ABSENT
    if not rows:
        return UNKNOWN  # tmux answered but listed nothing readable: never read as absent
    found = harness_row(rows, mark=mark, pane=pane)
    if found is None:
        return ABSENT
    return DEAD if found.dead else LIVE


def _harness(record: ListedSession, state: str, spec: tuple[str, float], receipts: list[Receipt]) -> HarnessState:
    """As `HarnessWatch.state` judges it from the probe, the harness's receipt mode and its receipts."""
    if state == UNKNOWN:
        return HarnessState.UNKNOWN
    if state != LIVE:
        return HarnessState.DEAD
    mode, ready_seconds = spec
    if mode == ReceiptMode.NONE.value:  # a snapshot written before kinds were named: an agent's name, with receipts
        return HarnessState.STARTING if _elapsed(record) < ready_seconds else HarnessState.READY
    return harness_state(receipts, now=datetime.now(UTC))  # noqa: TID251 - as SystemClock reads it


def _elapsed(record: ListedSession) -> float:
    """As `HarnessWatch._elapsed`: on the clock that never jumps when the record carries its reading
    from this boot, else on the wall clock, never less than none."""
    monotonic = time.clock_gettime(_BOOTTIME)
    if record.spawned_monotonic is not None and record.spawned_monotonic <= monotonic:
        return monotonic - record.spawned_monotonic
    if record.spawned_at is None:
        return 0.0
    return max(0.0, (datetime.now(UTC) - record.spawned_at).total_seconds())  # noqa: TID251 - as SystemClock


def _waiting(receipts: list[Receipt]) -> Waiting | None:
    if not receipts or harness_state(receipts) is not HarnessState.BLOCKED:
        return None  # what `waiting_on` says then, without importing it
    from domain.asks import waiting_on

    return waiting_on(receipts)


def _parked(record: ListedSession, now: datetime) -> str:
    if not record.parked:
        return ""  # what `park_line` says of no park
    from domain.parking import park_line

    return park_line(record.full().park, now)
