"""One work item in one cycle: first sight, re-arm, admit, the item's start, then its comments in
order — each delivered only when its harness confirms it."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from app.usecases.delivery import Delivery
from app.usecases.feedback import Feedback
from app.usecases.subjects import CommentSubject, StartSubject
from app.usecases.watch import HarnessWatch
from domain.events import Event, Level
from domain.ledger import Ledger, Resolution, StartRequest, is_authorized
from domain.model import ClosedBy, Comment, DeliveryId, Reaction, SessionRecord, SessionStatus, WorkItem
from domain.ports import ClockPort, EventSink, StateStore
from domain.receipts import delivery_tag, receipt_line, turn_ended_after
from domain.refs import WorkItemRef

if TYPE_CHECKING:
    from app.usecases.cycle_summary import CycleSummary


@dataclass(frozen=True, slots=True)
class WorkerConfig:
    authorized: frozenset[str]
    version: str
    secret: str


class ItemWorker:
    def __init__(
        self,
        *,
        store: StateStore,
        events: EventSink,
        clock: ClockPort,
        delivery: Delivery,
        watch: HarnessWatch,
        feedback: Feedback,
        config: WorkerConfig,
    ) -> None:
        self._store = store
        self._events = events
        self._clock = clock
        self._delivery = delivery
        self._watch = watch
        self._feedback = feedback
        self._config = config
        self._rearmed: set[WorkItemRef] = set()  # re-arm at most once per run per item

    def work(self, item: WorkItem, comments: list[Comment], *, armed: bool, summary: CycleSummary) -> None:
        ledger = self._store.ledger(item.ref)
        if ledger is None:
            ledger = self._first_sight(item, comments, armed=armed)
        else:
            admitted = self._rearm(ledger).admit(comments, authorized=self._config.authorized)
            if admitted != ledger:  # an idle item costs no write
                ledger = self._store.save_ledger(admitted)
        record = self._reactivated(self._store.session(item.ref))
        ledger = self._turns(ledger, record)
        go_on = True
        if ledger.start is not None and record is not None and self._watch.running(record):
            ledger = self._store.save_ledger(replace(ledger, start=None))  # it runs already: nothing to start
        if ledger.start is not None:
            start = StartSubject(item, ledger.start)
            ledger, record, go_on = self._delivery.attempt(item, ledger, record, start, armed=True, summary=summary)
        if record is not None and record.held:
            ledger = self._held(ledger, record)
        while go_on and not ledger.paused and (pending := ledger.next_pending) is not None:
            subject = CommentSubject(pending.comment)
            ledger, record, go_on = self._delivery.attempt(item, ledger, record, subject, armed=armed, summary=summary)

    def _first_sight(self, item: WorkItem, comments: list[Comment], *, armed: bool) -> Ledger:
        now = self._clock.now()
        ledger = Ledger.first_sight(item.ref, now=now, existing=comments)
        wanted = armed and is_authorized(item.author, self._config.authorized)
        if wanted and self._store.session(item.ref) is None:
            ledger = replace(ledger, start=StartRequest("first-sight", now))
        ledger = self._store.save_ledger(ledger)
        self._events.emit(Event.POLL_BASELINED, work_item=str(item.ref), baselined=len(ledger.resolved))
        return ledger

    def _rearm(self, ledger: Ledger) -> Ledger:
        if ledger.item in self._rearmed:
            return ledger
        self._rearmed.add(ledger.item)
        ledger, ids = ledger.rearm(running_version=self._config.version)
        if ids:
            self._events.emit(
                Event.POLL_REARMED, work_item=str(ledger.item), comment_ids=list(ids), version=self._config.version
            )
        return ledger

    def _reactivated(self, stored: SessionRecord | None) -> SessionRecord | None:
        """A paused session, or one closed upstream, whose item is watched again is active again;
        one an operator or a control comment closed stays closed until they reopen it."""
        record = reactivate(stored)
        if record is not None and record != stored:
            record = self._store.save_session(record)  # watched again: active again, so closing sees it
        return record

    def _held(self, ledger: Ledger, record: SessionRecord) -> Ledger:
        """Comments to an item whose session is held closed are resolved, not delivered."""
        if not ledger.pending:
            return ledger
        reason = "session-stopped" if record.closed_by is ClosedBy.CONTROL else "session-closed"
        for pending in ledger.pending:
            ledger = ledger.resolve(pending.comment.id, Resolution.SKIPPED, at=self._clock.now(), reason=reason)
            self._events.emit(
                Event.DISPATCH_DROPPED,
                level=Level.WARNING,
                reason=reason,
                work_item=str(record.item),
                comment_id=pending.comment.id,
                delivery_id=str(pending.comment.delivery_id),
            )
        return self._store.save_ledger(ledger)

    def _turns(self, ledger: Ledger, record: SessionRecord | None) -> Ledger:
        """The agent's turn for a delivered comment ended: say so once (🚀 on the comment)."""
        if not ledger.turns or record is None:
            return ledger
        receipts = self._watch.receipts(record)
        ended = ledger
        for turn in ledger.turns:
            if turn.spawn != record.spawn_id:
                ended = ended.turn_closed(turn.comment_id)  # another spawn has it: its turn is gone
                continue
            delivery = str(DeliveryId.for_comment(turn.comment_id))
            line = receipt_line(delivery, delivery_tag(self._config.secret, delivery))
            if turn_ended_after(receipts, line):
                ended = ended.turn_closed(turn.comment_id)
                self._events.emit(
                    Event.SESSION_TURN_FINISHED,
                    work_item=str(ledger.item),
                    comment_id=turn.comment_id,
                    delivery_id=delivery,
                )
                stub = Comment(turn.comment_id, ledger.item, None, "", self._clock.now(), kind=turn.kind)
                self._feedback.react(stub, Reaction.TURN_ENDED)
        return ledger if ended == ledger else self._store.save_ledger(ended)


def reactivate(record: SessionRecord | None) -> SessionRecord | None:
    """A paused session, or one closed upstream, whose item is watched again is active again."""
    if record is None or record.status is SessionStatus.ACTIVE or record.held:
        return record
    return replace(record, status=SessionStatus.ACTIVE, closed_by=None)
