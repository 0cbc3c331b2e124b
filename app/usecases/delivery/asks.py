"""What the agent asks goes to its work item, and an authorized answer comes back.

The harness's PermissionRequest hook writes its request as a receipt and waits beside it for a
decision file (adapters/receipts). `look` posts every request open, each once, as one comment with
its number; an answer comment (`the-loop allow N` / `allow always N` / `deny N [reason]` /
`answer N <option>`, or without the number for the only one open), executed once through the
ledger like every control comment, hands the hook of the request it binds to the decision the-loop
builds for it (`allow always` only to a harness whose hook takes a rule for the session). The
first answer the hook takes wins; any other is told why, with the requests open.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any

from app.usecases.cycle.meta import requests_made, save_requests_made
from app.usecases.delivery.feedback import Feedback
from app.usecases.delivery.watch import HarnessWatch
from app.usecases.unit_of_work import InUnitOfWork, UnitOfWork
from domain.asks import (
    UNBOUND_SAID,
    Answer,
    Answered,
    AnswerSource,
    AnswerState,
    Ask,
    OpenRequest,
    Unbound,
    answer_of,
    answered_reply,
    ask_comment,
    bind,
    blocked_episode,
    decision_for,
    open_asks,
    pane_answered_notice,
)
from domain.control import Control
from domain.events import Event, Level
from domain.model import Comment, HarnessSpec, PostedRequest, Reaction, SessionRecord, SessionStatus
from domain.policy import Decision
from domain.ports import ReceiptPort
from domain.receipts import Receipt
from domain.refs import WorkItemRef

TAKE_SECONDS = 3.0  # the hook looks for its answer every 0.2 s: taken well within this, or never
TAKE_POLL = 0.05
KEEP_CLOSED = 10  # closed requests kept on the record: a late answer naming one is told it was answered
# a request's comment that failed to post is tried again after 1 s, then 2, 4 … up to this
RETRY_MAX_SECONDS = 300.0


@dataclass(frozen=True, slots=True)
class AskConfig:
    wait_seconds: float = 0.0  # how long a request's hook waits for an answer (0: requests are not posted)
    host: str = ""  # cluster: this host's id; only the sessions it runs are looked at ("": one host)


@dataclass(frozen=True, slots=True)
class _By:
    """Who gave an answer, from where, and the event's fields that say so."""

    source: AnswerSource
    login: str
    fields: dict[str, Any]


@dataclass(frozen=True, slots=True)
class _Retry:
    at: float  # on the clock that never jumps: not tried again before
    wait: float  # seconds waited before this try: the next waits twice as long


@dataclass(kw_only=True, eq=False)
class Asks(InUnitOfWork):
    uow: UnitOfWork
    watch: HarnessWatch
    receipts: ReceiptPort
    feedback: Feedback
    config: AskConfig
    harness: Callable[[SessionRecord], HarnessSpec]  # the record's harness, as its spawns start it
    # requests whose comment failed to post, by receipt key: when each is tried again
    _retries: dict[str, _Retry] = field(init=False, default_factory=dict)
    # one look at a time per item: two at once would each give the item's next number to a request
    _looking: dict[WorkItemRef, threading.Lock] = field(init=False, default_factory=dict)
    _guard: threading.Lock = field(init=False, default_factory=threading.Lock)

    @property
    def enabled(self) -> bool:
        return self.config.wait_seconds > 0

    def look(self, record: SessionRecord | None, *, wait: bool = True) -> SessionRecord | None:
        """Post every request the agent waits on, each once with its number; tell the item once
        when a request posted was answered in the session instead. One look at a time per item (a
        lane's and the daemon's pause's); with `wait` False an item looked at now is left to that
        look. A save that lost to another writer leaves it to next time."""
        if not self.enabled or record is None or not record.spawn_id or record.status is not SessionStatus.ACTIVE:
            return record
        lock = self._lock(record.item)
        if not lock.acquire(blocking=wait):
            return record
        try:
            stored = self.store.session(record.item)
            if stored is not None and stored.version > record.version:
                record = stored  # the other look saved meanwhile: its numbers and posts stand
            return self._look(record)
        finally:
            lock.release()

    def _look(self, record: SessionRecord) -> SessionRecord | None:
        receipts = self.watch.receipts(record)
        asks = open_asks(receipts, taken=self.watch.taken(record, receipts), session_rules=self._session_rules(record))

        def answered(record: SessionRecord) -> SessionRecord:
            record = self._close(record, receipts, {ask.key for ask in asks})
            for ask in asks:
                made = next((request for request in record.requests if request.key == ask.key), None)
                if made is None or made.pending:
                    record = self._post(record, ask, made, episode=blocked_episode(receipts))
            return record

        # another writer first: what it stored stands, looked at again next time
        return self.uow.save(answered, read=lambda: self.store.session(record.item), value=record).value

    def _lock(self, item: WorkItemRef) -> threading.Lock:
        with self._guard:
            return self._looking.setdefault(item, threading.Lock())

    def sweep(self) -> None:
        """Beside the cycle (the daemon's ReceiptWatch): every running session of this host looked
        at, so a request reaches the item within a second or so, not at the next cycle."""
        if not self.enabled:
            return
        for record in self.store.sessions():
            if record.status is SessionStatus.ACTIVE and record.spawn_id and record.host in {"", self.config.host}:
                try:
                    self.look(record, wait=False)  # an item a lane looks at now is that lane's
                except Exception as error:  # one item's fault never stops the others; the cycle says it too
                    self.events.emit(
                        Event.POLL_ITEM_FAILED,
                        level=Level.ERROR,
                        work_item=str(record.item),
                        cause=f"{type(error).__name__}: {error}",
                    )

    def answer(self, record: SessionRecord | None, comment: Comment, control: Control) -> bool:
        """Execute one answer comment; True when the hook of the request it binds to took it."""
        answer = answer_of(control)
        opened = self._opened(record)
        if record is None or answer is None:
            return self._unused(comment, Unbound.DOES_NOT_FIT, opened)
        window = timedelta(seconds=self.config.wait_seconds)
        bound = bind(answer, opened, record.requests, written_at=comment.created_at, window=window)
        if isinstance(bound, Unbound):
            return self._unused(comment, bound, opened)
        by = _By(AnswerSource.GITHUB, comment.author or "", {"comment_id": comment.id, "author": comment.author})
        refused = self._give(record, bound, answer, by)
        if refused is not None:
            return self._unused(comment, refused[0], opened, said=refused[1])
        return True  # the control's own reaction acknowledges it

    def requests(self, item: WorkItemRef) -> list[OpenRequest]:
        """The requests of the item's agent open now and posted on the item, oldest first: the
        ones the fleet page may answer (a session of another host: none, its hook's files are there)."""
        record = self.store.session(item)
        if not self.enabled or record is None or record.host not in {"", self.config.host}:
            return []
        return [o for o in self._opened(record) if o.number is not None and o.posted_at is not None]

    def answer_from_page(self, item: WorkItemRef, answer: Answer) -> Decision[bool]:
        """An answer pressed on the fleet page for the request `answer` names by its number: given
        to its hook as a comment's answer is, written as an event whose source is the page; or not,
        and why in the-loop's words. The person saw that request on the page, numbered: no
        reading of times decides which request it answers."""
        record = self.store.session(item)
        if not self.enabled or record is None or not record.spawn_id:
            return Decision(False, UNBOUND_SAID[Unbound.NO_REQUEST])
        if record.host not in {"", self.config.host}:
            return Decision(
                False, f"its session runs on host {record.host}: answer it on the item, or on that host's page"
            )
        with self._lock(item):
            bound = next((o for o in self.requests(item) if o.number == answer.number), None)
            if bound is None:
                known = any(r.number == answer.number for r in record.requests)
                refused: tuple[Unbound, str] | None = (
                    Unbound.ALREADY_ANSWERED if known else Unbound.NO_SUCH_REQUEST,
                    "",
                )
            else:
                by = _By(AnswerSource.PAGE, "", {"source": AnswerSource.PAGE.value})
                refused = self._give(record, bound, answer, by)
        if refused is None:
            return Decision(True, f"request {answer.number}: {answer.verb.value} given")
        why, said = refused
        self.events.emit(Event.SESSION_ANSWER_UNUSED, level=Level.WARNING, work_item=str(item),
                         source=AnswerSource.PAGE.value, request=answer.number, why=why.value)  # fmt: skip
        return Decision(False, said or UNBOUND_SAID[why])

    def _give(self, record: SessionRecord, bound: OpenRequest, answer: Answer, by: _By) -> tuple[Unbound, str] | None:
        """The decision for `answer` handed to the hook of the request it binds to, and the request's
        comment edited to say so; or why not (and the-loop's words for it, when they are the decision's)."""
        ask = bound.ask
        state = self._state(record, ask.key)
        if state is not AnswerState.NONE:
            return (Unbound.TOO_LATE if state is AnswerState.EXPIRED else Unbound.ALREADY_ANSWERED), ""
        decision = decision_for(ask, answer, item=record.item, request=bound.number)
        if decision.choice is None:
            return Unbound.DOES_NOT_FIT, decision.reason
        self.receipts.give(record.item, record.spawn_id, ask.key, decision.choice)
        if not self._taken(record, ask):
            return Unbound.TOO_LATE, ""
        now = self.clock.now()
        waited = (now - ask.at).total_seconds() if ask.at else None
        self.events.emit(
            Event.SESSION_ANSWERED,
            work_item=str(record.item),
            request=bound.number,
            answer=answer.verb.value,
            reason=decision.reason,
            waited_seconds=round(waited, 3) if waited is not None else None,
            **by.fields,
        )
        self._say_answered(record, bound, Answered(decision.reason, by.source, now, by.login))
        return None

    def _say_answered(self, record: SessionRecord, bound: OpenRequest, answered: Answered) -> None:
        """The request's comment on the item begins by saying how it was answered (best-effort: a
        failed edit is reported, the answer stands)."""
        posted = next((r for r in record.requests if r.key == bound.ask.key and r.comment_id), None)
        if posted is None:
            return
        body = ask_comment(record.item, bound.ask, number=posted.number, wait_seconds=self.config.wait_seconds,
                           answered=answered)  # fmt: skip
        self.feedback.amend(record.item, posted.comment_id, body, notice="answered", request=posted.number)

    def _opened(self, record: SessionRecord | None) -> list[OpenRequest]:
        """The requests the harness may still wait on, with their numbers on the item."""
        if record is None or not record.spawn_id:
            return []
        receipts = self.watch.receipts(record)
        posted = {request.key: request for request in record.requests}
        opened = []
        taken = self.watch.taken(record, receipts)
        for ask in open_asks(receipts, taken=taken, session_rules=self._session_rules(record)):
            request = posted.get(ask.key)
            if request is None:
                opened.append(OpenRequest(ask))
            else:  # a number given but its comment not known to be posted: no answer binds to it by time
                posted_at = None if request.pending else request.posted_at
                opened.append(OpenRequest(ask, request.number, posted_at, request.comment_id))
        return opened

    def _post(self, record: SessionRecord, ask: Ask, made: PostedRequest | None, *, episode: str) -> SessionRecord:
        """Post a request's comment under the number it was given (`made`), or a new one given first:
        saved before the post, so a post that failed after GitHub made the comment is tried again
        with the same number, and no other request ever gets it."""
        if self._state(record, ask.key) is not AnswerState.NONE:
            return record  # its hook waits no more: the dialog is the pane's, as the blocked notice says
        retry = self._retries.get(ask.key)
        if retry is not None and self.clock.monotonic() < retry.at:
            return record
        if made is None:
            record, made = self._reserve(record, ask)
        body = ask_comment(record.item, ask, number=made.number, wait_seconds=self.config.wait_seconds)
        comment_id = self.feedback.notify(record.item, body, notice="asked", request=made.number)
        if comment_id is None:
            wait = min(RETRY_MAX_SECONDS, retry.wait * 2) if retry else 1.0
            self._retries[ask.key] = _Retry(self.clock.monotonic() + wait, wait)
            return record
        self._retries.pop(ask.key, None)
        self.events.emit(
            Event.SESSION_ASKED,
            work_item=str(record.item),
            request=made.number,
            kind=ask.kind.value,
            tool=ask.tool if ask.tool.isidentifier() else "",
            asked_at=ask.at.isoformat() if ask.at else None,
        )
        posted = replace(made, posted_at=self.clock.now(), pending=False, comment_id=comment_id)
        return self._posted(record, posted, episode or ask.key)

    def _reserve(self, record: SessionRecord, ask: Ask) -> tuple[SessionRecord, PostedRequest]:
        """The item's next request number given to `ask` and saved, before its comment is posted
        (`StaleWrite` when another writer saved first: nothing given)."""
        number = max(record.requests_made, requests_made(self.store, record.item)) + 1
        made = PostedRequest(ask.key, number, self.clock.now(), pending=True)
        with self.store.transaction():
            record = self.store.save_session(
                replace(record, requests=_kept((*record.requests, made)), requests_made=number)
            )
            save_requests_made(self.store, record.item, number)
        return record, made

    def _posted(self, record: SessionRecord, posted: PostedRequest, episode: str) -> SessionRecord:
        """The request's comment is on the item: its record says so. The request's comment stands
        for the episode's blocked notice: no second comment for it. A save that lost to another
        writer is made again on what it saved (the number stays the request's either way)."""

        def said(record: SessionRecord) -> SessionRecord:
            requests = tuple(posted if r.key == posted.key else r for r in record.requests)
            return self.store.save_session(replace(record, requests=requests, blocked_notice=episode))

        saved = self.uow.save(
            said,
            read=lambda: self.store.session(record.item),
            value=record,
            tries=3,
            again=lambda stored: any(r.key == posted.key for r in stored.requests),
        )
        return saved.value or record  # still pending: posted again, under its number, next time

    def _close(self, record: SessionRecord, receipts: list[Receipt], still: set[str]) -> SessionRecord:
        """The requests posted that are no longer open: answered from here (nothing more to say),
        or in the session — said once each; or their spawn is gone (nothing to say)."""
        spoke = {receipt.key for receipt in receipts}
        closing = [r for r in record.requests if not r.closed and r.key not in still]
        if not closing:
            return record
        for request in closing:
            if request.key in spoke and self._state(record, request.key) is not AnswerState.TAKEN:
                self.receipts.withdraw(record.item, record.spawn_id, request.key)
                self.events.emit(Event.SESSION_ANSWERED_IN_PANE, work_item=str(record.item), request=request.number)
                notice = pane_answered_notice(request.number)
                self.feedback.notify(record.item, notice, notice="answered-in-pane")
        keys = {request.key for request in closing}
        for key in keys:
            self._retries.pop(key, None)
        requests = tuple(replace(r, closed=True) if r.key in keys else r for r in record.requests)
        return self.store.save_session(replace(record, requests=_kept(requests)))

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

    def _session_rules(self, record: SessionRecord) -> bool:
        """The record's harness takes an allow with a rule for the session; a harness no longer
        configured is offered only what every hook takes."""
        try:
            return self.harness(record).session_rules
        except KeyError:
            return False

    def _state(self, record: SessionRecord, key: str) -> AnswerState:
        return self.receipts.answer_state(record.item, record.spawn_id, key)

    def _unused(self, comment: Comment, why: Unbound, opened: list[OpenRequest], *, said: str = "") -> bool:
        self.events.emit(
            Event.SESSION_ANSWER_UNUSED,
            level=Level.WARNING,
            work_item=str(comment.item),
            comment_id=comment.id,
            why=why.value,
        )
        reply = answered_reply(why=said or UNBOUND_SAID[why], opened=opened)
        self.feedback.notify(comment.item, reply, notice="answer-unused")
        self.feedback.react(comment, Reaction.FAILED)
        return False


def _kept(requests: tuple[PostedRequest, ...]) -> tuple[PostedRequest, ...]:
    """Every open request, and the last closed ones."""
    closed = [r for r in requests if r.closed][-KEEP_CLOSED:]
    return tuple(r for r in requests if not r.closed or r in closed)
