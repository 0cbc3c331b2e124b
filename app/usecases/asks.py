"""Issue 20: what the agent asks goes to its work item, and an authorized answer comes back.

The harness's PermissionRequest hook writes its request as a receipt and waits beside it for a
decision file (adapters/receipts). `look` posts the request once, as one comment; an answer comment
(`the-loop allow` / `allow always` / `deny [reason]` / `answer N`), executed once through the
ledger like every control comment, hands the hook the decision the-loop builds for it. The first
answer the hook takes wins; a later one is told it came too late or second.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from app.usecases.feedback import Feedback
from app.usecases.watch import HarnessWatch
from domain.asks import (
    Answer,
    AnswerState,
    AnswerVerb,
    Ask,
    answered_reply,
    ask_comment,
    blocked_episode,
    decision_for,
    open_ask,
    pane_answered_notice,
)
from domain.control import Control, Verb
from domain.errors import StaleWrite
from domain.events import Event, Level
from domain.model import Comment, Reaction, SessionRecord, SessionStatus
from domain.ports import ClockPort, EventSink, ReceiptPort, StateStore

TAKE_SECONDS = 3.0  # the hook looks for its answer every 0.2 s: taken well within this, or never
TAKE_POLL = 0.05
_ANSWERED = "the request was already answered from here"
_TOO_LATE = "the agent stopped waiting for an answer here; only its session can answer now"


@dataclass(frozen=True, slots=True)
class AskConfig:
    wait_seconds: float = 0.0  # how long a request's hook waits for an answer (0: requests are not posted)
    host: str = ""  # cluster: this host's id; only the sessions it runs are looked at ("": one host)


@dataclass(kw_only=True, eq=False)
class Asks:
    store: StateStore
    events: EventSink
    clock: ClockPort
    watch: HarnessWatch
    receipts: ReceiptPort
    feedback: Feedback
    config: AskConfig

    @property
    def enabled(self) -> bool:
        return self.config.wait_seconds > 0

    def look(self, record: SessionRecord | None) -> SessionRecord | None:
        """Post the request the agent waits on, once; tell the item once when a request posted was
        answered in the session instead. A save that lost to another writer leaves it to next time."""
        if not self.enabled or record is None or not record.spawn_id or record.status is not SessionStatus.ACTIVE:
            return record
        receipts = self.watch.receipts(record)
        ask = open_ask(receipts)
        try:
            if record.asked and not record.asked_closed and (ask is None or ask.key != record.asked):
                # a request of an earlier spawn (a respawn since) was answered by nobody
                record = self._closed(record, spoke=any(r.key == record.asked for r in receipts))
            if ask is not None and ask.key != record.asked:
                record = self._post(record, ask, episode=blocked_episode(receipts))
        except StaleWrite:
            return self.store.session(record.item)
        return record

    def sweep(self) -> None:
        """Between cycles (the daemon's pause): every running session of this host looked at, so a
        request reaches the item within a second or so, not at the next cycle."""
        if not self.enabled:
            return
        for record in self.store.sessions():
            if record.status is SessionStatus.ACTIVE and record.spawn_id and record.host in {"", self.config.host}:
                try:
                    self.look(record)
                except Exception as error:  # one item's fault never stops the others; the cycle says it too
                    self.events.emit(
                        Event.POLL_ITEM_FAILED,
                        level=Level.ERROR,
                        work_item=str(record.item),
                        cause=f"{type(error).__name__}: {error}",
                    )

    def answer(self, record: SessionRecord | None, comment: Comment, control: Control) -> bool:
        """Execute one answer comment; True when the agent's hook took it."""
        answer = _answer_of(control)
        ask = open_ask(self.watch.receipts(record)) if record is not None and record.spawn_id else None
        refused = self._refused(record, ask, answer)
        if refused is not None:
            return self._unused(comment, *refused)
        assert record is not None and ask is not None and answer is not None
        decision = decision_for(ask, answer, item=comment.item)
        if decision.choice is None:
            return self._unused(comment, "does-not-fit", decision.reason)
        self.receipts.give(record.item, record.spawn_id, ask.key, decision.choice)
        if not self._taken(record, ask):
            return self._unused(comment, "too-late", _TOO_LATE)
        waited = (self.clock.now() - ask.at).total_seconds() if ask.at else None
        self.events.emit(
            Event.SESSION_ANSWERED,
            work_item=str(comment.item),
            comment_id=comment.id,
            answer=answer.verb.value,
            reason=decision.reason,
            waited_seconds=round(waited, 3) if waited is not None else None,
        )
        return True  # the control's own reaction acknowledges it

    def _refused(self, record: SessionRecord | None, ask: Ask | None, answer: Answer | None) -> tuple[str, str] | None:
        """Why an answer is not used (the event's word, the reply's words), or None."""
        if record is None or answer is None:
            return "does-not-fit", "that command takes `always` or nothing after `allow`"
        if ask is None:
            if record.asked and self._state(record, record.asked) is AnswerState.TAKEN:
                return "already-answered", _ANSWERED
            return "no-request", "the agent waits on no request now (it was answered in its session, or it went on)"
        state = self._state(record, ask.key)
        if state in {AnswerState.GIVEN, AnswerState.TAKEN}:
            return "already-answered", _ANSWERED
        if state is AnswerState.EXPIRED:
            return "too-late", _TOO_LATE
        return None

    def _post(self, record: SessionRecord, ask: Ask, *, episode: str) -> SessionRecord:
        if self._state(record, ask.key) is AnswerState.EXPIRED:
            return record  # its hook waits no more: the dialog is the pane's, as the blocked notice says
        body = ask_comment(record.item, ask, wait_seconds=self.config.wait_seconds)
        if self.feedback.notify(record.item, body, notice="asked") is None:
            return record  # tried again next time
        self.events.emit(
            Event.SESSION_ASKED,
            work_item=str(record.item),
            kind=ask.kind.value,
            tool=ask.tool if ask.tool.isidentifier() else "",
            asked_at=ask.at.isoformat() if ask.at else None,
        )
        # the request's comment stands for the episode's blocked notice: no second comment for it
        return self.store.save_session(
            replace(record, asked=ask.key, asked_closed=False, asked_at=ask.at, blocked_notice=episode or ask.key)
        )

    def _closed(self, record: SessionRecord, *, spoke: bool) -> SessionRecord:
        """The request posted is no longer open: answered from here (nothing more to say), or in the
        session — said once; or its spawn is gone (`spoke` False: nothing to say)."""
        if spoke and self._state(record, record.asked) is not AnswerState.TAKEN:
            self.receipts.withdraw(record.item, record.spawn_id, record.asked)
            self.events.emit(Event.SESSION_ANSWERED_IN_PANE, work_item=str(record.item))
            notice = pane_answered_notice(record.asked_at)
            self.feedback.notify(record.item, notice, notice="answered-in-pane")
        return self.store.save_session(replace(record, asked_closed=True))

    def _taken(self, record: SessionRecord, ask: Ask) -> bool:
        """The hook takes a decision within a tick; one not taken in time is taken back."""
        deadline = self.clock.monotonic() + TAKE_SECONDS
        while True:
            state = self._state(record, ask.key)
            if state is AnswerState.TAKEN:
                return True
            if state is AnswerState.EXPIRED or self.clock.monotonic() >= deadline:
                return not self.receipts.withdraw(record.item, record.spawn_id, ask.key) and (
                    self._state(record, ask.key) is AnswerState.TAKEN
                )
            self.clock.sleep(TAKE_POLL)

    def _state(self, record: SessionRecord, key: str) -> AnswerState:
        return self.receipts.answer_state(record.item, record.spawn_id, key)

    def _unused(self, comment: Comment, why: str, said: str) -> bool:
        self.events.emit(
            Event.SESSION_ANSWER_UNUSED,
            level=Level.WARNING,
            work_item=str(comment.item),
            comment_id=comment.id,
            why=why,
        )
        self.feedback.notify(comment.item, answered_reply(why=said), notice="answer-unused")
        self.feedback.react(comment, Reaction.FAILED)
        return False


def _answer_of(control: Control) -> Answer | None:
    if control.verb is Verb.ALLOW:
        if control.text.casefold() == "always":
            return Answer(AnswerVerb.ALLOW_ALWAYS)
        return None if control.text else Answer(AnswerVerb.ALLOW)
    if control.verb is Verb.DENY:
        return Answer(AnswerVerb.DENY, control.text)
    return Answer(AnswerVerb.ANSWER, control.text)
