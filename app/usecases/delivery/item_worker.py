"""One work item in one cycle: its ledger from the intake, the item's start, then its comments in
order — each delivered only when its harness confirms it."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from app.usecases.cycle.intake import Intake, Listing
from app.usecases.delivery.asks import Asks
from app.usecases.delivery.control import Controls
from app.usecases.delivery.delivery import Delivery
from app.usecases.delivery.feedback import Feedback
from app.usecases.delivery.parking import RESUME, Parking, own_turn, resume_turn
from app.usecases.delivery.spending import Spending
from app.usecases.delivery.subjects import CommentSubject, StartSubject
from app.usecases.delivery.switching import HarnessSwitch, NotEnded
from app.usecases.delivery.watch import HarnessWatch
from app.usecases.unit_of_work import InUnitOfWork, UnitOfWork
from domain.control import Verb, control_of, triggered
from domain.events import Event, Level
from domain.ledger import DeliveryState, Ledger, Resolution, StartRequest, Turn
from domain.model import ClosedBy, Comment, DeliveryId, Reaction, SessionRecord, SessionStatus, WorkItem
from domain.notice import (
    closed_notice,
    conversation_gone_notice,
    harness_gone_notice,
    harness_started_notice,
    unrouted_notice,
)
from domain.park import Unpark
from domain.parking import failed_turn
from domain.ports import UsagePort
from domain.receipts import EndedTurn, delivery_of, delivery_tag, ended_turn, receipt_line
from domain.redaction import comment_fields
from domain.routing import Routing
from domain.slots import MIB
from domain.usage import JoinedTurn, Usage, UsageUnknown, usage_fields

if TYPE_CHECKING:
    from app.usecases.cycle.cycle_summary import CycleSummary


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
    unrouted: bool = False  # no agent for it: no rule covers it, no default harness, no start named one


@dataclass(frozen=True, slots=True)
class Worked:
    """How a cycle left an item: `settled` when nothing is left to do for it (no pending comment,
    no start, no open turn) until something changes — a kept comment, its listing, its record."""

    settled: bool
    record: SessionRecord | None
    due: float | None = None  # when (monotonic) a pasted comment's confirmation falls due: work it again then


@dataclass(frozen=True, slots=True)
class WorkerConfig:
    secret: str
    trigger: str = ""  # routing.trigger: when set, only comments holding it are prompts
    host: str = ""  # cluster: this host's id ("": one host)


@dataclass(kw_only=True, eq=False)
class ItemWorker(InUnitOfWork):
    uow: UnitOfWork
    intake: Intake
    delivery: Delivery
    controls: Controls
    watch: HarnessWatch
    feedback: Feedback
    parking: Parking
    switch: HarnessSwitch
    config: WorkerConfig
    routing: Routing
    usage: UsagePort
    spending: Spending
    asks: Asks | None = None

    def work(self, item: WorkItem, listing: Listing, *, summary: CycleSummary) -> Worked:
        ledger = self.intake.ledger(item, listing)
        record = self._reactivated(self.store.session(item.ref))
        ledger = self._taken_over(ledger, record)
        ledger, record = self._turns(item, ledger, record)
        if self.asks is not None:
            record = self.asks.look(record)  # what the agent asks, on the item once
        walk = _Walk(item, listing, summary, ledger, record)
        self._unpark(walk, by=Unpark.RESET)
        walk.go_on = walk.go_on and not self.parking.holds(walk.record)  # parked: comments wait, no attempt
        walk.unrouted = walk.go_on and self._unrouted(walk)  # no agent for it: comments wait, no attempt
        walk.go_on = walk.go_on and not walk.unrouted
        self._advance(walk)
        for pending in walk.ledger.pending:
            self._one(walk, pending.comment)
        left = walk.ledger
        settled = not (left.pending or left.start or left.turns or walk.waiting)
        return Worked(settled, walk.record, self.delivery.due(left))

    def _one(self, walk: _Walk, comment: Comment) -> None:
        """In order: a control comment is executed when its turn comes, even behind a comment that
        waits or failed; a comment made while paused waits (and goes right after a resume), one made
        while stopped is resolved, not delivered."""
        control = control_of(comment.body)
        pending = walk.ledger.pending_entry(comment.id)
        if control is None and self.delivery.awaits(comment) and pending and pending.state is DeliveryState.PASTED:
            self._settle(walk, comment)  # it went in already: neither a pause nor a stop unsays it
        elif control is not None:
            walk.ledger, walk.record = self.controls.execute(walk.ledger, walk.record, comment, control, item=walk.item)
            walk.ledger = self.store.save_ledger(walk.ledger)
            if control.verb is Verb.START and walk.unrouted and walk.ledger.start and walk.ledger.start.harness:
                walk.unrouted, walk.go_on = False, True  # it has its agent now: it starts, then they go
                self._has_agent(walk)
                self._advance(walk)
                named, walk.waiting = walk.waiting, []
                for waiting in named:
                    self._deliver(walk, waiting)
            if control.verb is Verb.RESUME:
                if self.parking.holds(walk.record):
                    assert walk.record is not None
                    walk.record = self.parking.release(walk.record)
                    walk.go_on = True
                    self._unpark(walk, by=Unpark.RESUME)
                resumed, walk.waiting = walk.waiting, []
                for waiting in resumed:
                    self._deliver(walk, waiting)
            self._advance(walk)
        elif not triggered(comment.body, self.config.trigger):
            walk.ledger = self._not_for_agent(walk.ledger, comment)
        elif walk.ledger.stopped or (walk.record is not None and walk.record.held):
            self._held(walk, comment)
        else:
            self._deliver(walk, comment)

    def _deliver(self, walk: _Walk, comment: Comment) -> None:
        if walk.ledger.paused:
            self._hold(walk, comment)
        if walk.go_on and not walk.ledger.paused and self.spending.holding(walk.item, author=comment.author or ""):
            walk.go_on = False  # a budget covering it is spent: it and the comments after it wait
        if walk.ledger.paused or not walk.go_on:
            walk.waiting.append(comment)
            return
        walk.ledger, walk.record, walk.go_on = self.delivery.attempt(
            walk.item,
            walk.ledger,
            walk.record,
            CommentSubject(comment),
            armed=walk.listing.armed,
            summary=walk.summary,
        )

    def _settle(self, walk: _Walk, comment: Comment) -> None:
        """A comment pasted before, whose confirmation is awaited: confirmed or
        failed once it falls due, left as it is before; later comments go only as they would."""
        go_on = walk.go_on
        walk.ledger, walk.record, settled = self.delivery.attempt(
            walk.item, walk.ledger, walk.record, CommentSubject(comment), armed=walk.listing.armed, summary=walk.summary
        )
        walk.go_on = go_on and settled

    def _unpark(self, walk: _Walk, *, by: Unpark) -> None:
        """A parked item's reset came: its agent gets the one resume prompt (its own delivery, with
        its own attempts), and the comments held meanwhile follow it."""
        if walk.record is None or not self.parking.due(walk.record):
            return
        walk.ledger, subject = self.parking.resume(walk.item, walk.ledger, walk.record, by=by)
        walk.ledger, walk.record, walk.go_on = self.delivery.attempt(
            walk.item, walk.ledger, walk.record, subject, armed=True, summary=walk.summary
        )
        if walk.record is not None and (walk.ledger.start is None or walk.ledger.start.reason != RESUME):
            walk.record = self.parking.resumed(walk.record, by=by)

    def _unrouted(self, walk: _Walk) -> bool:
        """The item has no agent, and no start names one: it would get a session (it is armed, or a
        start is wanted) but no routing rule covers it and there is no default harness, or the harness
        its record names is configured no more. Told once on the item, with an event; told again only
        after it had an agent."""
        ledger, record = walk.ledger, walk.record
        if record is None and not (walk.listing.armed or ledger.start):
            return False
        gone = record is not None and not self.routing.configured(record.harness)
        named = ledger.start is not None and bool(ledger.start.harness)
        if named or (not gone and (record is not None or self.routing.route(walk.item))):
            self._has_agent(walk)
            return False
        if not ledger.unrouted_noticed:
            self._tell_agentless(walk, record.harness if gone and record is not None else "")
        return True

    def _has_agent(self, walk: _Walk) -> None:
        """It has an agent (again): losing it is told again."""
        if walk.ledger.unrouted_noticed:
            walk.ledger = self.store.save_ledger(replace(walk.ledger, unrouted_noticed=False))

    def _tell_agentless(self, walk: _Walk, gone: str) -> None:
        """The notice, then the event and the mark: a failed post is tried again next cycle."""
        item = walk.item.ref
        if gone:
            notice = harness_gone_notice(item, harness=gone, known=self.switch.known)
            if self.feedback.notify(item, notice, notice="harness-gone") is None:
                return
            self.events.emit(Event.SESSION_HARNESS_UNCONFIGURED, level=Level.WARNING, work_item=str(item), harness=gone)
        else:
            if self.feedback.notify(item, unrouted_notice(item), notice="unrouted") is None:
                return
            self.events.emit(Event.ROUTING_UNMATCHED, level=Level.WARNING, work_item=str(item))
        walk.ledger = self.store.save_ledger(replace(walk.ledger, unrouted_noticed=True))

    def _advance(self, walk: _Walk) -> None:
        """The item's start, when one is wanted and its harness is not running already."""
        if walk.ledger.start is not None and walk.ledger.start.reason == RESUME:
            return  # a resume prompt's attempts: parking's
        if not self._given_its_harness(walk):
            return  # the harness it runs could not be ended: the start is tried again next cycle
        ledger, record = walk.ledger, walk.record
        if ledger.start is not None and record is not None and self._runs(ledger.start, walk.item, record):
            walk.ledger = self.store.save_ledger(replace(ledger, start=None))  # it runs already
        if walk.ledger.start is None or not walk.go_on:
            return
        if self.spending.holding(walk.item):
            walk.go_on = False  # a budget covering it is spent: its start, a prompt too, waits with its comments
            return
        start = StartSubject(walk.item, walk.ledger.start)
        walk.ledger, walk.record, walk.go_on = self.delivery.attempt(
            walk.item, walk.ledger, walk.record, start, armed=True, summary=walk.summary
        )

    def _given_its_harness(self, walk: _Walk) -> bool:
        """A start that names a harness (`the-loop start codex`, `sessions start --harness`): an item
        running another has it ended and the named one recorded, in a fresh conversation, with the
        permission mode a rule gives that harness for the item; one notice says so. False when the
        running one could not be seen to end (nothing changed)."""
        start, record = walk.ledger.start, walk.record
        if start is None or not start.harness or not walk.go_on:
            return True
        if record is not None and record.harness == start.harness:
            return True
        item = walk.item.ref
        if record is None:
            # said once, before its first attempt: that attempt may wait cycles (memory, a spent budget)
            if start.attempts == 0 and not start.noticed:
                notice = harness_started_notice(item, harness=start.harness)
                if self.feedback.notify(item, notice, notice="harness") is not None:
                    walk.ledger = self.store.save_ledger(replace(walk.ledger, start=replace(start, noticed=True)))
            return True
        mode = self.routing.mode_for(walk.item, start.harness)
        try:
            walk.record = self.switch.switch(record, start.harness, permission_mode=mode, by=start.reason)
        except NotEnded as error:
            self.events.emit(
                Event.SESSION_HARNESS_CHANGE_FAILED,
                level=Level.WARNING,
                work_item=str(item),
                harness=start.harness,
                was=record.harness,
                reason=str(error),
            )
            return False
        walk.ledger = self.store.save_ledger(replace(walk.ledger, turns=()))  # the ended agent's: none ends now
        notice = harness_started_notice(item, harness=start.harness, was=record.harness)
        self.feedback.notify(item, notice, notice="harness")
        return True

    def _runs(self, start: StartRequest, item: WorkItem, record: SessionRecord) -> bool:
        """Its harness runs, and is not the one this start spawned still starting: that one's retry
        waits for its receipt, and ends it and starts it again if it hung in its start. A record
        given another harness and not spawned since runs nothing of it."""
        if record.spawned_at is None or not self.watch.running(record):
            return False
        spawned = StartSubject(item, start).delivery_id in record.recent_delivery_ids
        return not (spawned and self.delivery.dispatcher.starting(record))

    def _taken_over(self, ledger: Ledger, record: SessionRecord | None) -> Ledger:
        """Cluster: this host now holds an item whose session ran on another host (lost): it starts
        here, a fresh conversation, even before the next comment."""
        if record is None or record.host in {"", self.config.host} or record.status is not SessionStatus.ACTIVE:
            return ledger
        if ledger.start is not None or ledger.stopped:
            return ledger
        if record.hibernated_at is not None:
            # the host holding its conversation is gone, or the lease would have waited for it there
            self.events.emit(
                Event.SESSION_WOKEN_ELSEWHERE, level=Level.WARNING, work_item=str(record.item), host=record.host,
                harness_session_id=record.harness_session_id,
            )  # fmt: skip
            notice = conversation_gone_notice(record.item, host=record.host)
            self.feedback.notify(record.item, notice, notice="conversation-gone")
        return self.store.save_ledger(replace(ledger, start=StartRequest("taken-over", self.clock.now())))

    def _reactivated(self, stored: SessionRecord | None) -> SessionRecord | None:
        """A paused session, or one closed upstream, whose item is watched again is active again;
        one an operator or a control comment closed stays closed until they reopen it."""
        record = reactivate(stored)
        if record is not None and record != stored:
            record = self.store.save_session(record)  # watched again: active again, so closing sees it
        return record

    def _hold(self, walk: _Walk, comment: Comment) -> None:
        """A comment that waits for `the-loop resume` says so once: its state records the saying."""
        pending = walk.ledger.pending_entry(comment.id)
        if pending is None or pending.state is not DeliveryState.QUEUED:
            return
        self.events.emit(
            Event.COMMENT_HELD,
            work_item=str(comment.item),
            comment_id=comment.id,
            delivery_id=str(comment.delivery_id),
            rule="the-loop pause",
            **comment_fields(comment),
        )
        walk.ledger = self.store.save_ledger(walk.ledger.mark(comment.id, DeliveryState.HELD))

    def _held(self, walk: _Walk, comment: Comment) -> None:
        """A comment to an item stopped by a control comment, or closed by an operator, is resolved,
        not delivered. The operator's closing is told on the item once (and each such comment gets 😕):
        before the ledger's write, so a crash between them repeats the notice rather than loses it."""
        record = walk.record
        by_operator = record is not None and record.held and record.closed_by is ClosedBy.OPERATOR
        reason = "session-closed" if by_operator else "session-stopped"
        if by_operator:
            self._tell_closed(walk, comment)
        ledger = walk.ledger.resolve(comment.id, Resolution.SKIPPED, at=self.clock.now(), reason=reason)
        self.events.emit(
            Event.DISPATCH_DROPPED,
            level=Level.WARNING,
            reason=reason,
            work_item=str(comment.item),
            comment_id=comment.id,
            delivery_id=str(comment.delivery_id),
            author=comment.author,
            rule="sessions close" if by_operator else "the-loop stop",
        )
        walk.ledger = self.store.save_ledger(ledger)

    def _tell_closed(self, walk: _Walk, comment: Comment) -> None:
        """😕 on the comment; the first of the closing also gets the one notice (a failed post is
        tried again with the next comment)."""
        self.feedback.react(comment, Reaction.FAILED)
        record = walk.record
        if record is None or record.closed_notice:
            return
        if self.feedback.notify(comment.item, closed_notice(comment), notice="closed", comment_id=comment.id) is None:
            return
        # reopened or reset meanwhile: what is stored now decides the next comment
        walk.record = self.uow.save(
            lambda current: self.store.save_session(replace(current, closed_notice=comment.id)),
            read=lambda: self.store.session(comment.item),
            value=record,
        ).value

    def _not_for_agent(self, ledger: Ledger, comment: Comment) -> Ledger:
        """With a trigger phrase set, a comment without it is not a prompt (no reaction)."""
        ledger = ledger.resolve(comment.id, Resolution.SKIPPED, at=self.clock.now(), reason="not-for-the-agent")
        self.events.emit(
            Event.POLL_NOT_FOR_AGENT, work_item=str(comment.item), comment_id=comment.id, trigger=self.config.trigger
        )
        return self.store.save_ledger(ledger)

    def _turns(
        self, item: WorkItem, ledger: Ledger, record: SessionRecord | None
    ) -> tuple[Ledger, SessionRecord | None]:
        """The agent's turn for a delivered comment ended: say so once (🚀 on the comment), with
        what it cost; a turn that failed on the API parks the item (😕 on the comment, one notice)."""
        if not ledger.turns or record is None:
            return ledger, record
        receipts = self.watch.receipts(record)
        ended, measured = ledger, None
        for turn in ledger.turns:
            if turn.spawn != record.spawn_id:
                ended = ended.turn_closed(turn.comment_id)  # another spawn has it: its turn is gone
                continue
            resuming, own = resume_turn(turn), own_turn(turn)
            delivery = turn.comment_id if own else str(DeliveryId.for_comment(turn.comment_id))
            line = receipt_line(delivery, delivery_tag(self.config.secret, delivery))
            failed, done = failed_turn(receipts, line), ended_turn(receipts, line)
            if failed is not None:
                ended = ended.turn_closed(turn.comment_id)
                record = self.parking.failed(record, turn, failed, ledger.item)
            elif done is not None:
                ended = ended.turn_closed(turn.comment_id)
                if resuming:
                    record = self.parking.done(record)
                rss = self.watch.memory(record)
                measured = rss if rss is not None else measured
                self._finished(item, turn, record, done, delivery=delivery, rss=rss, own=own)
        record = self.parking.tell(record)
        saved = ledger if ended == ledger else self.store.save_ledger(ended)
        if measured is not None and record is not None and record.rss_bytes != measured:
            record = self._measured(record, measured)
        return saved, record

    def _finished(
        self,
        item: WorkItem,
        turn: Turn,
        record: SessionRecord,
        done: EndedTurn,
        *,
        delivery: str,
        rss: int | None,
        own: bool,
    ) -> None:
        """A turn's end said once, with what it cost (kept, and weighed against the budgets); 🚀 on its
        comment. A prompt of the-loop's own (a start's, a resume's) has no comment: its event names its
        delivery alone."""
        usage = self._cost(record, done)
        priced: dict[str, Any] = {}
        if not isinstance(usage, JoinedTurn):  # a joined prompt's cost is its turn's, kept with the one that started it
            cost = self.spending.turn_ended(
                item, comment_id=turn.comment_id, author=turn.author, harness=record.harness, usage=usage
            )
            priced = {} if cost.micro_dollars is None else {"usd_estimated": cost.micro_dollars / 1e6}
        self.events.emit(
            Event.SESSION_TURN_FINISHED,
            work_item=str(item.ref),
            comment_id=None if own else turn.comment_id,
            delivery_id=delivery,
            rss_mib=rss // MIB if rss is not None else None,
            **usage_fields(usage),
            **priced,
        )
        if not own:
            stub = Comment(turn.comment_id, item.ref, None, "", self.clock.now(), kind=turn.kind)
            self.feedback.react(stub, Reaction.TURN_ENDED)

    def _cost(self, record: SessionRecord, done: EndedTurn) -> Usage | JoinedTurn:
        """What the turn cost, from its agent's own records; unknown when they do not say it, or when
        reading them failed: a turn's end is said and closed whatever the read found. A prompt that
        joined a turn another started names that one's delivery: the turn's cost is said with it."""
        if done.joined is not None:
            return JoinedTurn(delivery_of(done.joined, self.config.secret))
        try:
            return self.usage.turn_usage(record.harness, done)
        except Exception as error:  # any failure of the read is an unknown cost, never a turn left open
            return UsageUnknown(f"reading it failed: {type(error).__name__}: {error}")

    def _measured(self, record: SessionRecord, rss: int) -> SessionRecord:
        """Its agent's memory at its turn's end, kept on its record (written meanwhile: on what is stored)."""
        saved = self.uow.save(
            lambda current: self.store.save_session(replace(current, rss_bytes=rss)),
            read=lambda: self.store.session(record.item),
            value=record,
            tries=2,
        )
        return saved.value or record


def reactivate(record: SessionRecord | None) -> SessionRecord | None:
    """A paused session, or one closed upstream, whose item is watched again is active again."""
    if record is None or record.status is SessionStatus.ACTIVE or record.held:
        return record
    return replace(record, status=SessionStatus.ACTIVE, closed_by=None)
