"""Pruning ledgers, a few a cycle: the resolved comment ids that the newness rule no longer needs go,
so a ledger holds what the last while resolved, not everything an item ever said."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from app.usecases.cycle.meta import read_through_key
from app.usecases.unit_of_work import InUnitOfWork, UnitOfWork
from domain.cluster import Held
from domain.errors import StateError, StoreUnreachable
from domain.events import Event, Level
from domain.ledger import PRUNE_MARGIN
from domain.refs import WorkItemRef

PRUNE_BATCH = 20  # ledgers looked at per poll interval: each in its own short transaction, the cycle never waits long
# a cycle that took longer than the interval (a burst delivered) looks at more, at most this many
# intervals' worth: the pass keeps its pace in time, however long the cycles run
MAX_CATCH_UP = 10
# a pass over every item begins at most this often: a horizon moves with the reads, an hour behind
# them, so a pass a cycle would only re-read quiet ledgers (an idle cycle touches none)
PASS_EVERY_SECONDS = 600.0
POSITION_KEY = "ledger-pruning-after"  # meta: the last item a pass looked at, so a restart resumes it


@dataclass(kw_only=True, eq=False)
class LedgerPruner(InUnitOfWork):
    """Each `run` looks at the next `batch` ledgers of a pass over every item (the list is read once
    a pass, so a cycle costs the same whatever the backlog), those this host holds, and prunes each
    up to a horizon its repository's reads vouch for: `margin` (an hour) before the last read that moved
    the cursor began, and before every comment still in its inbox. A repository never read moves no
    horizon, so a comment written while reads failed is still new when it comes.

    Where a pass stands is kept in the store (`POSITION_KEY` and the host): a daemon restarted more
    often than a pass takes — its cycles long while they deliver — resumes the pass there instead
    of beginning again at the first item and never reaching the last ones."""

    uow: UnitOfWork
    batch: int = PRUNE_BATCH
    pass_every_seconds: float = PASS_EVERY_SECONDS
    margin: timedelta = PRUNE_MARGIN  # how far the horizon trails the last read
    host: str = ""  # where this host's pass stands is its own: hosts hold different items
    interval_seconds: float = 0.0  # the poll interval, which `batch` is per (0: per cycle, whatever it took)
    _queue: list[WorkItemRef] = field(init=False, default_factory=list)  # what is left of this pass
    _next_pass: float | None = field(init=False, default=None)  # on the monotonic clock; None: the first pass is due
    _last_run: float | None = field(init=False, default=None)  # on the monotonic clock

    def run(self, held: Held) -> int:
        """Prune the next few ledgers; how many comment ids were dropped."""
        size = self._turn_size()  # how long the cycle since the last one took, whether a pass runs or not
        if not self._queue:
            now = self.clock.monotonic()
            if self._next_pass is not None and now < self._next_pass:
                return 0
            self._queue, self._next_pass = self._pass(), now + self.pass_every_seconds
        turn, self._queue = self._queue[:size], self._queue[size:]
        if turn:
            self.store.save_meta(self._position_key, str(turn[-1]) if self._queue else "")
        turn = [item for item in turn if item in held]
        if not turn:
            return 0
        reads = self.store.meta()
        waiting: dict[WorkItemRef, datetime] = {}
        for entry in self.store.inbox_index():
            waiting[entry.item] = min(entry.created_at, waiting.get(entry.item, entry.created_at))
        dropped = 0
        for item in turn:
            read = reads.get(read_through_key(item.repo))
            if read is not None:
                before = datetime.fromisoformat(read) - self.margin
                dropped += self._prune(item, min(before, waiting.get(item, before)))
        return dropped

    def _turn_size(self) -> int:
        """`batch` per poll interval since the last run, at least `batch`, at most `MAX_CATCH_UP` times it."""
        now = self.clock.monotonic()
        elapsed, self._last_run = (now - self._last_run if self._last_run is not None else 0.0), now
        if self.interval_seconds <= 0:
            return self.batch
        intervals = min(max(1.0, elapsed / self.interval_seconds), MAX_CATCH_UP)
        return int(self.batch * intervals)

    @property
    def _position_key(self) -> str:
        return f"{POSITION_KEY}:{self.host}"

    def _pass(self) -> list[WorkItemRef]:
        """Every item, from after where the last pass stopped when one was cut short."""
        items = list(self.store.items())
        after = self.store.meta().get(self._position_key, "")
        if not after:
            return items
        try:
            stopped = WorkItemRef.parse(after)
        except ValueError:  # written by another version: begin again
            return items
        return [item for item in items if item > stopped] or items

    def _prune(self, item: WorkItemRef, before: datetime) -> int:
        try:
            return self._prune_one(item, before)
        except StoreUnreachable:
            raise
        except StateError as error:  # one ledger this version cannot read stops only its own pruning
            self.events.emit(
                Event.POLL_ITEM_FAILED, level=Level.ERROR, work_item=str(item), cause=f"pruning its ledger: {error}"
            )
            return 0

    def _prune_one(self, item: WorkItemRef, before: datetime) -> int:
        ledger = self.store.ledger(item)
        pruned = ledger.prune(before=before) if ledger is not None else None
        if ledger is None or pruned is None or pruned is ledger:
            return 0
        # compare-and-set: a worker or an operator that wrote meanwhile wins
        if not self.uow.save(self.store.save_ledger, read=lambda: self.store.ledger(item), value=pruned).won:
            return 0
        count = len(ledger.resolved) - len(pruned.resolved)
        horizon = pruned.horizon.isoformat() if pruned.horizon else ""
        self.events.emit(Event.POLL_LEDGER_PRUNED, work_item=str(item), comments=count, horizon=horizon)
        return count
