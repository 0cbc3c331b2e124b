"""Executing control comments: pause, resume, stop, start, status — each once, never delivered."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from app.usecases.delivery.asks import Asks
from app.usecases.delivery.closing import Closer
from app.usecases.delivery.feedback import Feedback
from app.usecases.delivery.switching import HarnessSwitch
from app.usecases.delivery.watch import HarnessWatch
from app.usecases.unit_of_work import InUnitOfWork, UnitOfWork
from domain.asks import waiting_on
from domain.control import Control, Status, Verb, control_of, status_reply, unknown_verb_reply, when
from domain.events import Event, Level
from domain.item_facts import status_of
from domain.ledger import DeliveryState, Ledger, Resolution, StartRequest
from domain.model import ClosedBy, Comment, HarnessSpec, Reaction, SessionRecord, SessionStatus, WorkItem
from domain.notice import no_agent_start_reply, safe_id, unknown_harness_reply
from domain.parking import park_line
from domain.ports import TmuxPort
from domain.pricing import dollars
from domain.receipts import HarnessState
from domain.redaction import comment_fields
from domain.routing import Routing
from domain.spending import Spent

Outcome = tuple[Ledger, SessionRecord | None]


@dataclass(frozen=True, slots=True)
class ControlConfig:
    keep_session_on_close: bool = True


@dataclass(kw_only=True, eq=False)
class Controls(InUnitOfWork):
    tmux: TmuxPort
    uow: UnitOfWork
    closer: Closer
    watch: HarnessWatch
    feedback: Feedback
    harness: Callable[[str], HarnessSpec]
    config: ControlConfig
    switch: HarnessSwitch
    routing: Routing
    asks: Asks | None = None

    def execute(
        self, ledger: Ledger, record: SessionRecord | None, comment: Comment, control: Control, *, item: WorkItem
    ) -> Outcome:
        """Act first, then resolve the comment: a crash in between acts again (every verb but
        status is idempotent), never loses the act."""
        where = str(comment.item)
        if control.verb is None:
            self.feedback.notify(comment.item, unknown_verb_reply(), notice="control-unknown", comment_id=comment.id)
            self.events.emit(Event.CONTROL_UNKNOWN, level=Level.WARNING, work_item=where, comment_id=comment.id)
            return self._resolved(ledger, comment, "unknown"), record
        ledger, record, done = self._act(control, ledger, record, comment, item)
        if done:
            self.events.emit(
                Event.CONTROL_EXECUTED,
                verb=control.verb.value,
                work_item=where,
                comment_id=comment.id,
                **comment_fields(comment),
            )
            self.feedback.react(comment, Reaction.CONTROL)
        return self._resolved(ledger, comment, control.verb.value), record

    def _act(
        self, control: Control, ledger: Ledger, record: SessionRecord | None, comment: Comment, item: WorkItem
    ) -> tuple[Ledger, SessionRecord | None, bool]:
        verb = control.verb
        if verb in {Verb.ALLOW, Verb.DENY, Verb.ANSWER}:  # an answer to what the agent asks
            answered = self.asks is not None and self.asks.answer(record, comment, control)
            return ledger, record, answered
        if verb is Verb.PAUSE:
            return replace(ledger, paused=True), record, True
        if verb is Verb.RESUME:
            return replace(ledger, paused=False), record, True
        if verb is Verb.STOP:
            return replace(ledger, stopped=True, start=None), self._stop(record), True
        if verb is Verb.START:
            return self._start(ledger, record, comment, control.text, item)
        self.feedback.notify(comment.item, status_reply(self._status(ledger, record)), notice="status")
        return ledger, record, True

    def _stop(self, record: SessionRecord | None) -> SessionRecord | None:
        if record is None or record.status is SessionStatus.CLOSED:
            return record
        keep = self.config.keep_session_on_close
        self.closer.close(record, reason="control", keep_tmux=keep, by=ClosedBy.CONTROL)
        return self.store.session(record.item)

    def _start(
        self, ledger: Ledger, record: SessionRecord | None, comment: Comment, asked: str, item: WorkItem
    ) -> tuple[Ledger, SessionRecord | None, bool]:
        """`the-loop start`, or `the-loop start <harness>`: the item starts (again) with that harness.
        A plain start of an item that has no agent to start is refused, saying how to name one."""
        harness = self.switch.named(asked) if asked else ""
        if harness is None:
            self._refuse(comment, unknown_harness_reply(self.switch.known), reason="no such harness")
            return ledger, record, False
        gone = record is not None and not self.routing.configured(record.harness)
        if not harness and (gone or (record is None and self.routing.route(item) is None)):
            reply = no_agent_start_reply(self.switch.known, was=record.harness if record and gone else "")
            self._refuse(comment, reply, reason="no agent for the item")
            return ledger, record, False
        if record is not None and record.closed_by is ClosedBy.OPERATOR and record.status is SessionStatus.CLOSED:
            self.events.emit(
                Event.CONTROL_REFUSED,
                level=Level.WARNING,
                work_item=str(comment.item),
                comment_id=comment.id,
                reason="closed by the operator",
                remedy=f"the-loop sessions reopen --work-item {comment.item}",
            )
            self.feedback.react(comment, Reaction.FAILED)
            return ledger, record, False
        if record is not None and record.closed_by is ClosedBy.CONTROL:
            record = self.store.save_session(replace(record, status=SessionStatus.ACTIVE, closed_by=None))
        # the daemon acts on it on the item's lane: a harness named that is not the one the item
        # runs is ended there, and the named one started (`ItemWorker._advance`)
        started = replace(ledger, stopped=False, start=StartRequest("control", self.clock.now(), harness=harness))
        return started, record, True

    def _refuse(self, comment: Comment, reply: str, *, reason: str) -> None:
        self.feedback.notify(comment.item, reply, notice="control-refused", comment_id=comment.id)
        self.events.emit(
            Event.CONTROL_REFUSED,
            level=Level.WARNING,
            work_item=str(comment.item),
            comment_id=comment.id,
            reason=reason,
        )
        self.feedback.react(comment, Reaction.FAILED)

    def _status(self, ledger: Ledger, record: SessionRecord | None) -> Status:
        waiting = sum(1 for p in ledger.pending if control_of(p.comment.body) is None)
        return Status(
            item=ledger.item,
            state=self._state_line(ledger, record),
            session=self._session_line(record),
            agent=self._agent_line(record),
            last_delivery=_last_delivery(ledger),
            waiting=waiting,
            paused=ledger.paused,
            stopped=ledger.stopped,
            spent=self._spent_line(ledger),
        )

    def _spent_line(self, ledger: Ledger) -> str:
        """The item's running total, from the store: money estimated where a price was known."""
        spent = sum(self.store.spent(item=ledger.item).values(), Spent())
        if not spent.turns:
            return ""
        turns = f"{spent.turns} turn{'s' if spent.turns != 1 else ''}, {spent.tokens:,} tokens"
        if spent.unknown == spent.turns:
            return f"{spent.turns} turn{'s' if spent.turns != 1 else ''}, usage unknown"
        unknown = f", {spent.unknown} of unknown usage" if spent.unknown else ""
        if not spent.priced:
            return f"{turns}{unknown} (no price known: tokens only)"
        return f"{dollars(spent.micro_dollars)} estimated ({turns}{unknown})"

    def _state_line(self, ledger: Ledger, record: SessionRecord | None) -> str:
        """The item's state as the page, `sessions list` and `why` say it (this command not counted as held)."""
        ledger = replace(ledger, pending=tuple(p for p in ledger.pending if control_of(p.comment.body) is None))
        if record is None:
            return status_of(None, ledger).line(self.clock.now())
        receipts = self.watch.receipts(record)
        shows = status_of(
            record,
            ledger,
            harness=self._harness_state(record),
            waiting=waiting_on(receipts, taken=self.watch.taken(record, receipts)),
        )
        return shows.line(self.clock.now())

    def _session_line(self, record: SessionRecord | None) -> str:
        if record is None:
            return "none yet"
        probe = self.tmux.probe(record.target, mark=record.spawn_id, pane=record.pane_id)
        closed = f" (closed by {record.closed_by.value})" if record.closed_by else ""
        return f"`{record.target.name}`: {record.status.value}{closed}; its harness's pane: {probe.harness.value}"

    def _harness_state(self, record: SessionRecord) -> HarnessState:
        """What its harness does, as one look says it; unknown for a harness configured no more."""
        if not self.routing.configured(record.harness):
            return HarnessState.UNKNOWN
        return self.watch.state(record, self.harness(record.harness), settled=False)

    def _agent_line(self, record: SessionRecord | None) -> str:
        if record is None:
            return "not started"
        if not self.routing.configured(record.harness):
            return f"{record.harness}, in the configuration no more: its comments wait for `the-loop start <harness>`"
        state = self._harness_state(record)
        receipts = self.watch.receipts(record)
        last = f"; last said: {receipts[-1].kind.value} at {when(receipts[-1].at)}" if receipts else ""
        waiting = waiting_on(receipts, taken=self.watch.taken(record, receipts))  # what it waits on, how long
        now = self.clock.now()
        said = [waiting.describe(now) if waiting else "", park_line(record.park, now)]
        return f"{record.harness}, {state.value}{last}" + "".join(f"; {part}" for part in said if part)

    def _resolved(self, ledger: Ledger, comment: Comment, reason: str) -> Ledger:
        return ledger.resolve(comment.id, Resolution.CONTROL, at=self.clock.now(), reason=reason)


def _last_delivery(ledger: Ledger) -> str:
    pasted = [p for p in ledger.pending if p.state is DeliveryState.PASTED]
    if pasted:
        return f"comment {safe_id(pasted[-1].comment.id)}: pasted, waiting for the agent to confirm it"
    delivered = [(r.at, cid, r) for cid, r in ledger.resolved.items() if r.kind is Resolution.DELIVERED]
    if not delivered:
        return "none yet"
    at, comment_id, resolved = max(delivered)
    how = resolved.reason.removeprefix("confirmed:")
    return f"comment {safe_id(comment_id)}: confirmed ({how}) at {when(at)}"
