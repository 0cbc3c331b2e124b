"""One work item in one cycle: first sight, re-arm, admit, the item's start, then its comments in
order — each delivered only when its harness confirms it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING

from app.usecases.control import Controls
from app.usecases.delivery import Delivery
from app.usecases.feedback import Feedback
from app.usecases.meta import armed_floor
from app.usecases.subjects import CommentSubject, StartSubject
from app.usecases.watch import HarnessWatch
from domain.control import Verb, control_of, triggered
from domain.events import Event, Level
from domain.ledger import ASIDE_EDITED, Ledger, Resolution, StartRequest, is_authorized
from domain.model import Arming, ClosedBy, Comment, DeliveryId, Reaction, SessionRecord, SessionStatus, WorkItem
from domain.ports import ClockPort, EventSink, StateStore, TrackerPort
from domain.receipts import delivery_tag, receipt_line, turn_ended_after
from domain.refs import WorkItemRef

if TYPE_CHECKING:
    from app.usecases.cycle_summary import CycleSummary


@dataclass(frozen=True, slots=True)
class Listing:
    """How the cycle found an item: the label it carries, whether a session may be spawned for it
    (`spawnOnUnmatched`), and when its repository began to be read (the tracker's clock)."""

    label: str
    armed: bool
    since: datetime | None = None
    history: bool = False  # the repository's first cycle: what the item holds is all history


@dataclass
class _Walk:
    """One item's comments being worked: the ledger and record as they stand, whether later
    comments may still go, and those that wait for a resume."""

    item: WorkItem
    listing: Listing
    summary: CycleSummary
    ledger: Ledger
    record: SessionRecord | None
    go_on: bool = True
    waiting: list[Comment] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class WorkerConfig:
    authorized: frozenset[str]
    version: str
    secret: str
    trigger: str = ""  # routing.trigger: when set, only comments holding it are prompts
    host: str = ""  # cluster: this host's id ("": one host)


class ItemWorker:
    def __init__(
        self,
        *,
        tracker_for: Callable[[WorkItemRef], TrackerPort],
        store: StateStore,
        events: EventSink,
        clock: ClockPort,
        delivery: Delivery,
        controls: Controls,
        watch: HarnessWatch,
        feedback: Feedback,
        config: WorkerConfig,
    ) -> None:
        self._tracker_for = tracker_for
        self._store = store
        self._events = events
        self._clock = clock
        self._delivery = delivery
        self._controls = controls
        self._watch = watch
        self._feedback = feedback
        self._config = config
        self._rearmed: set[WorkItemRef] = set()  # re-arm at most once per run per item

    def work(self, item: WorkItem, listing: Listing, *, summary: CycleSummary) -> None:
        kept = self._store.inbox(item.ref)
        self._ignored(kept)
        ledger = self._store.ledger(item.ref)
        if ledger is None:
            ledger = self._first_sight(item, listing, kept)
        else:
            admitted = self._set_aside(self._rearm(ledger).admit(kept, authorized=self._config.authorized), kept)
            if admitted != ledger or kept:  # an idle item costs no write
                ledger = self._take(admitted, kept)
        record = self._reactivated(self._store.session(item.ref))
        ledger = self._taken_over(ledger, record)
        ledger = self._turns(ledger, record)
        walk = _Walk(item, listing, summary, ledger, record)
        self._advance(walk)
        for pending in walk.ledger.pending:
            self._one(walk, pending.comment)

    def _one(self, walk: _Walk, comment: Comment) -> None:
        """In order: a control comment is executed when its turn comes, even behind a comment that
        waits or failed; a comment made while paused waits (and goes right after a resume), one made
        while stopped is resolved, not delivered."""
        control = control_of(comment.body)
        if control is not None:
            walk.ledger, walk.record = self._controls.execute(walk.ledger, walk.record, comment, control)
            walk.ledger = self._store.save_ledger(walk.ledger)
            if control.verb is Verb.RESUME:
                resumed, walk.waiting = walk.waiting, []
                for waiting in resumed:
                    self._deliver(walk, waiting)
            self._advance(walk)
        elif not triggered(comment.body, self._config.trigger):
            walk.ledger = self._not_for_agent(walk.ledger, comment)
        elif walk.ledger.stopped or (walk.record is not None and walk.record.held):
            walk.ledger = self._held(walk.ledger, walk.record, comment)
        else:
            self._deliver(walk, comment)

    def _deliver(self, walk: _Walk, comment: Comment) -> None:
        if walk.ledger.paused or not walk.go_on:
            walk.waiting.append(comment)
            return
        walk.ledger, walk.record, walk.go_on = self._delivery.attempt(
            walk.item,
            walk.ledger,
            walk.record,
            CommentSubject(comment),
            armed=walk.listing.armed,
            summary=walk.summary,
        )

    def _advance(self, walk: _Walk) -> None:
        """The item's start, when one is wanted and its harness is not running already."""
        ledger, record = walk.ledger, walk.record
        if ledger.start is not None and record is not None and self._watch.running(record):
            walk.ledger = self._store.save_ledger(replace(ledger, start=None))  # it runs already
        if walk.ledger.start is None or not walk.go_on:
            return
        start = StartSubject(walk.item, walk.ledger.start)
        walk.ledger, walk.record, walk.go_on = self._delivery.attempt(
            walk.item, walk.ledger, walk.record, start, armed=True, summary=walk.summary
        )

    def _first_sight(self, item: WorkItem, listing: Listing, kept: list[Comment]) -> Ledger:
        """Only what was there before the item was armed (its label) is baselined; what an
        authorized author wrote since is delivered — whether or not it was read yet."""
        if listing.history and listing.since is not None:
            # the streams start at `since`: what they had then was read as history, not asked again
            arming = Arming(listing.since, ())
        else:
            arming = self._tracker_for(item.ref).arming(item, listing.label)
        floors = (arming.armed_at, listing.since, armed_floor(self._store, item.ref))
        armed_at = max(floor for floor in floors if floor is not None)
        now = self._clock.now()
        ledger = Ledger.first_sight(item.ref, now=now, armed_at=armed_at)
        found = [*arming.comments, *kept]
        ledger = self._set_aside(ledger.admit(found, authorized=self._config.authorized), found)
        wanted = listing.armed and is_authorized(item.author, self._config.authorized)
        if wanted and self._store.session(item.ref) is None:
            ledger = replace(ledger, start=StartRequest("first-sight", now))
        ledger = self._take(ledger, kept)
        self._events.emit(
            Event.POLL_BASELINED, work_item=str(item.ref), armed_at=armed_at.isoformat(), pending=len(ledger.pending)
        )
        return ledger

    def _taken_over(self, ledger: Ledger, record: SessionRecord | None) -> Ledger:
        """Cluster: this host now holds an item whose session ran on another host (lost): it starts
        here, a fresh conversation, even before the next comment."""
        if record is None or record.host in {"", self._config.host} or record.status is not SessionStatus.ACTIVE:
            return ledger
        if ledger.start is not None or ledger.stopped:
            return ledger
        return self._store.save_ledger(replace(ledger, start=StartRequest("taken-over", self._clock.now())))

    def _ignored(self, comments: list[Comment]) -> None:
        """A control comment by someone not authorized steers nothing: an event, nothing else."""
        for comment in comments:
            if control_of(comment.body) is not None and not is_authorized(comment.author, self._config.authorized):
                self._events.emit(
                    Event.CONTROL_IGNORED, level=Level.WARNING, work_item=str(comment.item), comment_id=comment.id
                )

    def _set_aside(self, ledger: Ledger, comments: list[Comment]) -> Ledger:
        """A comment that will never be a prompt is resolved, and said: history, or edited before
        its first read by someone not authorized (whose text is not its author's)."""
        ledger, aside = ledger.set_aside(comments, now=self._clock.now(), authorized=self._config.authorized)
        for comment, why in aside:
            if why == ASIDE_EDITED:
                self._events.emit(
                    Event.POLL_COMMENT_EDITED_BY_OTHER,
                    level=Level.WARNING,
                    work_item=str(ledger.item),
                    comment_id=comment.id,
                    author=comment.author,
                    editor=comment.editor,
                )
            else:
                self._events.emit(
                    Event.POLL_COMMENT_HISTORY,
                    work_item=str(ledger.item),
                    comment_id=comment.id,
                    armed_at=ledger.floor.isoformat(),
                )
        return ledger

    def _take(self, ledger: Ledger, kept: list[Comment]) -> Ledger:
        """The inbox's comments are in the ledger now: both in one transaction."""
        with self._store.transaction():
            saved = self._store.save_ledger(ledger)
            if kept:
                self._store.inbox_remove(ledger.item, [c.id for c in kept])
        return saved

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

    def _held(self, ledger: Ledger, record: SessionRecord | None, comment: Comment) -> Ledger:
        """A comment to an item stopped by a control comment, or closed by an operator, is resolved,
        not delivered."""
        reason = (
            "session-stopped"
            if ledger.stopped or (record and record.closed_by is ClosedBy.CONTROL)
            else ("session-closed")
        )
        ledger = ledger.resolve(comment.id, Resolution.SKIPPED, at=self._clock.now(), reason=reason)
        self._events.emit(
            Event.DISPATCH_DROPPED,
            level=Level.WARNING,
            reason=reason,
            work_item=str(comment.item),
            comment_id=comment.id,
            delivery_id=str(comment.delivery_id),
        )
        return self._store.save_ledger(ledger)

    def _not_for_agent(self, ledger: Ledger, comment: Comment) -> Ledger:
        """With a trigger phrase set, a comment without it is not a prompt (no reaction)."""
        ledger = ledger.resolve(comment.id, Resolution.SKIPPED, at=self._clock.now(), reason="not-for-the-agent")
        self._events.emit(
            Event.POLL_NOT_FOR_AGENT, work_item=str(comment.item), comment_id=comment.id, trigger=self._config.trigger
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
