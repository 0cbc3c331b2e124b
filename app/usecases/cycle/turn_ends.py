"""An agent's turn that ended is acted on as soon as its receipt is written, not at the next cycle:
the daemon looks at the receipts beside the cycle, as it does for what the agents ask."""

from __future__ import annotations

from dataclasses import dataclass, field

from app.usecases.cycle.poll import PollCycle
from app.usecases.delivery.watch import HarnessWatch
from domain.model import SessionStatus
from domain.ports import StateStore
from domain.receipts import turns_ended
from domain.refs import WorkItemRef


@dataclass(frozen=True, slots=True)
class _Seen:
    """What an item's last look found: its record's version and the turns its spawn said ended."""

    spawn: str
    version: int
    ended: int


@dataclass(kw_only=True, eq=False)
class TurnEnds:
    store: StateStore
    watch: HarnessWatch
    cycle: PollCycle
    host: str = ""  # cluster: this host's id; only the sessions it runs are looked at ("": one host)
    _seen: dict[WorkItemRef, _Seen] = field(init=False, default_factory=dict)

    def sweep(self) -> None:
        """Beside the cycle (ReceiptWatch): each running session of this host whose agent said a
        turn ended since the last look, while a delivered comment's turn is open or a comment
        waits, is worked now on its item's lane (which says it once, and saves its ledger as the
        cycle does: the cycle then finds it closed). A look costs one read of the records and of
        each spawn's receipts; a ledger is read only when a turn ended or the record changed (a
        delivery opened a turn whose end may already be written). No GitHub read: the reaction is
        the only call."""
        seen, due = {}, []
        for record in self.store.sessions():
            if record.status is not SessionStatus.ACTIVE or not record.spawn_id:
                continue
            if record.host not in {"", self.host}:
                continue
            now = _Seen(record.spawn_id, record.version, turns_ended(self.watch.receipts(record)))
            seen[record.item] = now
            if now.ended and self._seen.get(record.item) != now and self._open(record.item, record.spawn_id):
                due.append(record.item)
        self._seen = seen
        if due:
            self.cycle.work_now(due)

    def _open(self, item: WorkItemRef, spawn: str) -> bool:
        """A delivered comment's turn is open, or a comment waits (held for a turn's end by an agent
        that takes no paste mid-turn): the item's work has something to do now the turn ended."""
        ledger = self.store.ledger(item)
        return ledger is not None and (bool(ledger.pending) or any(turn.spawn == spawn for turn in ledger.turns))
