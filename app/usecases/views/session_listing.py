"""Looking at the sessions: each record with what tmux says of its harness's pane now and what the
harness last said (its receipts): it only reads the store. `SessionsAdmin` lists with it. What a view shows is made in
`app.usecases.views.session_shown`, which the lean start of `sessions list` (`app.cli.lean_listing`)
shows its own reading of the store's rows with.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from app.usecases.delivery.watch import HarnessWatch
from app.usecases.views.session_shown import STOPPED as STOPPED  # noqa: PLC0414 - re-exported: the admin names it here
from app.usecases.views.session_shown import HeldItem, Spend, has_status, shown_json, status_text
from domain.asks import Waiting, waiting_on
from domain.fleet import ItemStatus
from domain.item_facts import status_of
from domain.model import HarnessSpec, SessionRecord, SessionState, SessionStatus
from domain.parking import park_line
from domain.ports import ClockPort, ClusterPort, StateStore, TmuxPort
from domain.receipts import HarnessState, Receipt
from domain.refs import WorkItemRef
from domain.spending import Spent


@dataclass(frozen=True, slots=True)
class SessionView:
    """A session record, what tmux says about its harness's pane right now, and what the harness
    itself last said (its receipts)."""

    record: SessionRecord
    state: SessionState
    harness: HarnessState
    last_receipt: Receipt | None = None
    host: str = ""  # several hosts: the one holding the item ("" none, or alone)
    here: bool = True  # its session runs in this host's tmux (else nothing here was looked at)
    paused: bool = False  # its ledger: `the-loop pause` holds its comments
    stopped: bool = False  # its ledger: `the-loop stop` holds its comments
    waiting: Waiting | None = None  # what its blocked agent waits on, since when
    now: datetime | None = None  # when it was looked at
    parked: str = ""  # parked on an API failure: until when, and for how long already
    shows: ItemStatus | None = None  # the item's state, as everything shows it (None: not yet looked at)
    spent: Spend | None = None  # what its turns cost so far (None: not looked at)

    @property
    def status(self) -> str:
        """What holds the item, as the operator reads it: its ledger's pause or stop first."""
        return status_text(self)

    def has_status(self, wanted: str) -> bool:
        """`sessions list --status`: paused matches a paused record or item, stopped a stopped item."""
        return has_status(self, wanted)

    def as_json(self) -> dict[str, Any]:
        return shown_json(self)


@dataclass(kw_only=True, eq=False)
class SessionsListing:
    tmux: TmuxPort
    store: StateStore
    watch: HarnessWatch
    harnesses: Mapping[str, HarnessSpec]
    clock: ClockPort
    cluster: ClusterPort | None = None

    @property
    def shared(self) -> bool:
        return self.cluster is not None and self.cluster.shared

    def listing(self, status: SessionStatus | str | None = None) -> list[SessionView]:
        """Every session (with `status`: those `SessionView.has_status` matches)."""
        return self._listing(self.store.sessions(), status)

    def _listing(self, records: list[SessionRecord], status: SessionStatus | str | None) -> list[SessionView]:
        wanted = status.value if isinstance(status, SessionStatus) else status
        views = [self._held(view) for view in self._views(records)]
        return [view for view in views if wanted is None or view.has_status(wanted)]

    def listed(self, status: SessionStatus | str | None = None) -> list[SessionView | HeldItem]:
        """What `sessions list` shows: every session, and every item `the-loop pause` / `stop` holds
        that has none, in the order of their items (with `status`: those it matches)."""
        wanted = status.value if isinstance(status, SessionStatus) else status
        records = self.store.sessions()
        sessions = self._listing(records, status)
        with_session = {record.item for record in records}
        held = [self._held_item(item) for item in self.store.items() if item not in with_session]
        shown = [view for view in held if view is not None and (wanted is None or has_status(view, wanted))]
        return sorted([*sessions, *shown], key=lambda view: view.record.item)

    def _held_item(self, item: WorkItemRef) -> HeldItem | None:
        ledger = self.store.ledger(item)
        if ledger is None or not (ledger.paused or ledger.stopped):
            return None
        return HeldItem(item, paused=ledger.paused, stopped=ledger.stopped, here=not self.shared)

    def _views(self, records: list[SessionRecord]) -> list[SessionView]:
        if not self.shared or self.cluster is None:
            return [self._view(record) for record in records]
        # several hosts: each session is looked at only by the host whose tmux runs it
        holders = {lease.item: lease.host for lease in self.cluster.leases() if lease.live}
        me = self.cluster.host
        return [
            replace(self._view(r), host=me) if holders.get(r.item) == me
            else SessionView(r, SessionState.UNKNOWN, HarnessState.UNKNOWN, host=holders.get(r.item, ""), here=False)
            for r in records
        ]  # fmt: skip

    def _held(self, view: SessionView) -> SessionView:
        """The view with what its ledger holds, and the item's state made from both."""
        ledger = self.store.ledger(view.record.item)
        shows = status_of(view.record, ledger, harness=view.harness, here=view.here, waiting=view.waiting)
        spent = sum(self.store.spent(item=view.record.item).values(), Spent())
        costs = (spent.micro_dollars, spent.tokens, spent.turns, spent.priced)
        if ledger is None or not (ledger.paused or ledger.stopped):
            return replace(view, shows=shows, spent=costs)
        return replace(view, paused=ledger.paused, stopped=ledger.stopped, shows=shows, spent=costs)

    def viewed(self, record: SessionRecord) -> SessionView:
        """One record, looked at as `listing` looks at each (only its own tmux is asked)."""
        if not self.shared or self.cluster is None:
            return self._held(self._view(record))
        holder = next((lease.host for lease in self.cluster.leases() if lease.item == record.item and lease.live), "")
        if holder == self.cluster.host:
            return self._held(replace(self._view(record), host=holder))
        return self._held(SessionView(record, SessionState.UNKNOWN, HarnessState.UNKNOWN, host=holder, here=False))

    def _view(self, record: SessionRecord) -> SessionView:
        probe = self.tmux.probe(record.target, mark=record.spawn_id, pane=record.pane_id)
        harness = self.harnesses.get(record.harness)
        state = self.watch.state(record, harness, probe, settled=False) if harness else HarnessState.UNKNOWN
        receipts = self.watch.receipts(record)
        last = receipts[-1] if receipts else None
        now = self.clock.now()
        return SessionView(
            record,
            probe.harness,
            state,
            last,
            waiting=waiting_on(receipts, taken=self.watch.taken(record, receipts)),
            now=now,
            parked=park_line(record.park, now),
        )
