"""Pruning ledgers, a few a cycle: the resolved comment ids that the newness rule no longer needs go,
so a ledger holds what the last while resolved, not everything an item ever said."""

from __future__ import annotations

from datetime import datetime

from app.usecases.meta import read_through
from domain.cluster import Held
from domain.errors import StaleWrite
from domain.events import Event
from domain.ledger import PRUNE_MARGIN
from domain.ports import EventSink, StateStore
from domain.refs import WorkItemRef

PRUNE_BATCH = 20  # ledgers looked at per cycle: each in its own short transaction, the cycle never waits long


class LedgerPruner:
    """Each `run` looks at the next `batch` ledgers this host holds (round the items in turn), and
    prunes each up to a horizon its repository's reads vouch for: `PRUNE_MARGIN` before the last
    read that moved the cursor began, and before every comment still in its inbox. A repository
    never read moves no horizon, so a comment written while reads failed is still new when it comes."""

    def __init__(self, *, store: StateStore, events: EventSink, batch: int = PRUNE_BATCH) -> None:
        self._store = store
        self._events = events
        self._batch = batch
        self._after: WorkItemRef | None = None  # the last item looked at: the next run starts past it

    def run(self, held: Held) -> int:
        """Prune the next few ledgers; how many comment ids were dropped."""
        items = [item for item in self._store.items() if item in held]
        start = next((n for n, item in enumerate(items) if self._after is None or item > self._after), 0)
        turn = items[start:] + items[:start]  # round the items: each is looked at in turn
        waiting: dict[WorkItemRef, datetime] = {}
        for entry in self._store.inbox_index():
            waiting[entry.item] = min(entry.created_at, waiting.get(entry.item, entry.created_at))
        dropped = 0
        for item in turn[: self._batch]:
            self._after = item
            dropped += self._prune(item, waiting.get(item))
        return dropped

    def _prune(self, item: WorkItemRef, waiting: datetime | None) -> int:
        read = read_through(self._store, item.repo)
        ledger = self._store.ledger(item)
        if read is None or ledger is None:
            return 0
        before = read - PRUNE_MARGIN if waiting is None else min(read - PRUNE_MARGIN, waiting)
        pruned = ledger.prune(before=before)
        if pruned is ledger:
            return 0
        try:
            self._store.save_ledger(pruned)  # compare-and-set: a worker or an operator that wrote meanwhile wins
        except StaleWrite:
            return 0
        count = len(ledger.resolved) - len(pruned.resolved)
        horizon = pruned.horizon.isoformat() if pruned.horizon else ""
        self._events.emit(Event.POLL_LEDGER_PRUNED, work_item=str(item), comments=count, horizon=horizon)
        return count
