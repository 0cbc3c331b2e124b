"""Pruning ledgers, a few a cycle: the resolved comment ids that the newness rule no longer needs go,
so a ledger holds what the last while resolved, not everything an item ever said."""

from __future__ import annotations

from datetime import datetime

from app.usecases.meta import read_through_key
from domain.cluster import Held
from domain.errors import StaleWrite, StateError, StoreUnreachable
from domain.events import Event, Level
from domain.ledger import PRUNE_MARGIN
from domain.ports import EventSink, StateStore
from domain.refs import WorkItemRef

PRUNE_BATCH = 20  # ledgers looked at per cycle: each in its own short transaction, the cycle never waits long


class LedgerPruner:
    """Each `run` looks at the next `batch` ledgers of a pass over every item (the list is read once
    a pass, so a cycle costs the same whatever the backlog), those this host holds, and prunes each
    up to a horizon its repository's reads vouch for: `PRUNE_MARGIN` before the last read that moved
    the cursor began, and before every comment still in its inbox. A repository never read moves no
    horizon, so a comment written while reads failed is still new when it comes."""

    def __init__(self, *, store: StateStore, events: EventSink, batch: int = PRUNE_BATCH) -> None:
        self._store = store
        self._events = events
        self._batch = batch
        self._queue: list[WorkItemRef] = []  # what is left of this pass

    def run(self, held: Held) -> int:
        """Prune the next few ledgers; how many comment ids were dropped."""
        if not self._queue:
            self._queue = list(self._store.items())
        turn, self._queue = self._queue[: self._batch], self._queue[self._batch :]
        turn = [item for item in turn if item in held]
        if not turn:
            return 0
        reads = self._store.meta()
        waiting: dict[WorkItemRef, datetime] = {}
        for entry in self._store.inbox_index():
            waiting[entry.item] = min(entry.created_at, waiting.get(entry.item, entry.created_at))
        dropped = 0
        for item in turn:
            read = reads.get(read_through_key(item.repo))
            if read is not None:
                before = datetime.fromisoformat(read) - PRUNE_MARGIN
                dropped += self._prune(item, min(before, waiting.get(item, before)))
        return dropped

    def _prune(self, item: WorkItemRef, before: datetime) -> int:
        try:
            return self._prune_one(item, before)
        except StoreUnreachable:
            raise
        except StateError as error:  # one ledger this version cannot read stops only its own pruning
            self._events.emit(
                Event.POLL_ITEM_FAILED, level=Level.ERROR, work_item=str(item), cause=f"pruning its ledger: {error}"
            )
            return 0

    def _prune_one(self, item: WorkItemRef, before: datetime) -> int:
        ledger = self._store.ledger(item)
        pruned = ledger.prune(before=before) if ledger is not None else None
        if ledger is None or pruned is None or pruned is ledger:
            return 0
        try:
            self._store.save_ledger(pruned)  # compare-and-set: a worker or an operator that wrote meanwhile wins
        except StaleWrite:
            return 0
        count = len(ledger.resolved) - len(pruned.resolved)
        horizon = pruned.horizon.isoformat() if pruned.horizon else ""
        self._events.emit(Event.POLL_LEDGER_PRUNED, work_item=str(item), comments=count, horizon=horizon)
        return count
