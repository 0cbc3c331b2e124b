"""What the fleet page shows and does: every item's row, one item's detail, and the guarded
actions — the same reads and hands `sessions` and `status` use, with the page as the source."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from app.usecases.cluster.cluster_view import ClusterView, cluster_view
from app.usecases.cluster.slot_wait import waits
from app.usecases.delivery.asks import Asks
from app.usecases.unit_of_work import Lost, UnitOfWork
from app.usecases.views.costs import Tally
from app.usecases.views.page_costs import CostBook, PageCosts
from app.usecases.views.sessions_admin import ResetPlan, SessionsAdmin, SessionView, UnknownWorkItem
from domain.asks import Answer, OpenRequest
from domain.control import control_of
from domain.events import Event
from domain.fleet import ItemState, ItemStatus
from domain.holds import hold
from domain.item_facts import status_of
from domain.ledger import Ledger
from domain.model import SessionStatus
from domain.policy import Decision
from domain.ports import ClusterPort, TmuxPort
from domain.refs import RepoRef, WorkItemRef
from domain.spending import TurnCost

PAGE = "page"  # the `source` of every event an action on the page writes
SCREEN_LINES = 30  # the pane's last lines an item's page shows, whole lines


@dataclass(frozen=True, slots=True)
class ItemRow:
    item: WorkItemRef
    host: str
    shows: ItemStatus  # its state, and since when, until when, why
    last_receipt: str
    receipt_at: datetime | None
    pending: int
    status: SessionStatus
    paused: bool
    title: str = ""  # as the repository's last listing has it; else as its session last kept it
    harness: str = ""  # the agent its session runs ("": none yet)
    rss_bytes: int | None = None  # its agent's memory at its last turn's end

    @property
    def memory(self) -> str:
        """Its agent's memory at its last turn's end, as the page says it ("": not measured)."""
        return f"{self.rss_bytes // (1024 * 1024)} MiB" if self.rss_bytes is not None else ""

    @property
    def state(self) -> ItemState:
        return self.shows.state


@dataclass(frozen=True, slots=True)
class Held:
    """A comment waiting on the item, and what holds it ("": nothing, it waits its turn)."""

    comment_id: str
    said: str


@dataclass(frozen=True, slots=True)
class ItemDetail:
    row: ItemRow
    screen: str  # the harness pane's last lines, as tmux shows them (the page sanitizes and bounds them)
    held: tuple[Held, ...] = ()  # its comments waiting, oldest first


class Fleet:
    def __init__(
        self,
        *,
        admin: SessionsAdmin,
        uow: UnitOfWork,
        cluster: ClusterPort,
        tmux: TmuxPort,
        heartbeat: Callable[[], str | None] = lambda: None,
        asks: Asks | None = None,
    ) -> None:
        self._admin, self._uow, self._cluster, self._tmux = admin, uow, cluster, tmux
        self._store, self._events = uow.store, uow.events
        self._heartbeat, self._asks = heartbeat, asks
        self._costs = CostBook(lambda since: self._store.costs(since=since))

    def hosts(self) -> ClusterView:
        return cluster_view(self._cluster, self._store.sessions())

    def lease_seconds(self) -> Mapping[str, float]:
        """Each host's soonest lease expiry, in seconds: its lease health."""
        soonest: dict[str, float] = {}
        for lease in self._cluster.leases() if self._cluster.shared else ():
            if lease.live:
                soonest[lease.host] = min(soonest.get(lease.host, lease.expires_in_seconds), lease.expires_in_seconds)
        return soonest

    def heartbeat(self) -> str | None:
        return self._heartbeat()

    def costs(self, now: datetime) -> PageCosts:
        """Each item's running total, the last days' and the dearest items': the store's rows read on
        from where the last refresh left off."""
        return self._costs.figures(now)

    def turn_costs(self, item: WorkItemRef) -> list[TurnCost]:
        """What each of the item's turns cost, oldest first (one read of its rows)."""
        return self._store.costs(item=item)

    def rows(self) -> list[ItemRow]:
        """One row per item the store knows, and per item waiting for a slot (never looked at yet):
        with a session, what its harness does; without, "none"."""
        slots = self._slots()
        rows = [self._row(view, slots) for view in self._admin.listing()]
        with_session = {row.item for row in rows}
        known = dict.fromkeys([*self._store.items(), *(WorkItemRef.parse(item) for item in slots)])
        rows += [self._bare(item, slots) for item in known if item not in with_session]
        titles = self._titles({row.item.repo for row in rows})
        return [replace(row, title=titles.get(row.item, row.title)) for row in rows]

    def _titles(self, repos: Iterable[RepoRef]) -> dict[WorkItemRef, str]:
        """From each repository's last listing, shared by its reader: no request to GitHub."""
        return {
            entry.item.ref: entry.item.title for repo in repos for entry in self._cluster.shared_listing(repo).listed
        }

    def detail(self, item: WorkItemRef) -> ItemDetail:
        try:
            view = self._admin.view(item)
        except UnknownWorkItem:
            if self._store.ledger(item) is None:
                raise
            row, screen = self._bare(item, self._slots()), ""  # known, never spawned: its comments still have journeys
        else:
            screen = self._tmux.screen(view.record.target, view.record.pane_id, lines=SCREEN_LINES) if view.here else ""
            row = self._row(view, self._slots())
        titled = replace(row, title=self._titles([item.repo]).get(item, row.title))
        return ItemDetail(titled, screen, self._held(self._store.ledger(item), item))

    def _held(self, ledger: Ledger | None, item: WorkItemRef) -> tuple[Held, ...]:
        """The comments waiting for the agent, each with what holds it (as `why` says it)."""
        if ledger is None:
            return ()
        held = hold(ledger, self._store.session(item), slot_since=self._slots().get(str(item)))
        said = held.said() if held is not None else ""
        return tuple(Held(p.comment.id, said) for p in ledger.pending if control_of(p.comment.body) is None)

    def _slots(self) -> dict[str, datetime]:
        """Since when each item waits for a free slot."""
        return {wait.item: wait.since for wait in waits(self._store.meta())}

    def _bare(self, item: WorkItemRef, slots: Mapping[str, datetime]) -> ItemRow:
        """An item with a ledger and no session."""
        ledger = self._store.ledger(item)
        pending, paused = (len(ledger.pending), ledger.paused) if ledger else (0, False)
        shows = status_of(None, ledger, slot_since=slots.get(str(item)))
        return ItemRow(item, "", shows, "", None, pending, SessionStatus.ACTIVE, paused)

    def _row(self, view: SessionView, slots: Mapping[str, datetime]) -> ItemRow:
        ledger = self._store.ledger(view.record.item)
        paused = bool(ledger and ledger.paused)
        receipt = view.last_receipt
        slot = slots.get(str(view.record.item))
        shows = status_of(
            view.record, ledger, harness=view.harness, here=view.here, waiting=view.waiting, slot_since=slot
        )
        return ItemRow(
            item=view.record.item,
            host=view.host or view.record.host or self._cluster.host,
            shows=shows,
            last_receipt=receipt.kind.value if receipt else "",
            receipt_at=receipt.at if receipt else None,
            pending=len(ledger.pending) if ledger else 0,
            status=view.record.status,
            paused=paused,
            title=view.record.title,
            harness=view.record.harness,
            rss_bytes=view.record.rss_bytes,
        )

    # the actions: each writes one event whose source is the page

    def pause(self, item: WorkItemRef, *, paused: bool) -> bool:
        """Comments to the item wait (or are delivered again); False when it already was so."""
        ledger = self._store.ledger(item)
        if ledger is None:
            raise UnknownWorkItem(item, what="ledger")
        if ledger.paused == paused:
            return False
        # the daemon may save the ledger meanwhile: decided again while it is not yet so; a
        # conflict on every try reaches the page, whose action is then not done
        saved = self._uow.save(
            lambda stored: self._store.save_ledger(replace(stored, paused=paused)),
            read=lambda: self._store.ledger(item),
            value=ledger,
            tries=3,
            again=lambda stored: stored.paused != paused,
            lost=Lost.RAISE,
        )
        if saved.value is None:
            raise UnknownWorkItem(item, what="ledger")
        if not saved.won:
            return False
        if paused:
            self._events.emit(Event.DELIVERY_PAUSED, source=PAGE, work_item=str(item))
        else:
            self._events.emit(Event.DELIVERY_RESUMED, source=PAGE, work_item=str(item))
        return True

    def close(self, item: WorkItemRef) -> bool:
        return self._admin.close(item, keep_tmux=None, source=PAGE)

    def reopen(self, item: WorkItemRef) -> bool:
        return self._admin.reopen(item, source=PAGE)

    def reset_preview(self, item: WorkItemRef) -> ResetPlan:
        return self._admin.plan_reset([item])[0]

    def reset(self, item: WorkItemRef) -> ResetPlan:
        plan = self.reset_preview(item)
        self._admin.reset(plan, source=PAGE)
        return plan

    def requests(self, item: WorkItemRef) -> list[OpenRequest]:
        """The requests of the item's agent the page may answer: open, and posted on the item."""
        return self._asks.requests(item) if self._asks is not None else []

    def answer(self, item: WorkItemRef, answer: Answer) -> Decision[bool]:
        """The answer given to the request it names, as a comment's answer would be (the event's source: page)."""
        if self._asks is None:
            return Decision(False, "this page does not answer requests: answer on the item")
        return self._asks.answer_from_page(item, answer)

    def as_json(self, now: datetime) -> dict[str, Any]:
        costs = self.costs(now)
        return {
            "hosts": self.hosts().as_json(),
            "items": [_row_json(row, costs.items.get(str(row.item))) for row in self.rows()],
            "costs": costs.as_json(),
        }


def _row_json(row: ItemRow, cost: Tally | None) -> dict[str, Any]:
    return {
        "work_item": str(row.item),
        "title": row.title,
        "host": row.host,
        "harness": row.harness or None,
        "rss_mib": row.rss_bytes // (1024 * 1024) if row.rss_bytes is not None else None,
        "state": row.state.value,
        "state_detail": row.shows.as_json(),
        "last_receipt": row.last_receipt or None,
        "receipt_at": row.receipt_at.isoformat() if row.receipt_at else None,
        "pending": row.pending,
        "status": row.status.value,
        "cost": cost.as_json() if cost is not None else None,  # its running total, money estimated
    }
