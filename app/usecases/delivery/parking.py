"""Parking an item whose agent's turn failed on the API, and resuming it at the reset (or on
`the-loop resume`): one notice per episode, no paste and no attempt while parked, one resume prompt."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime

from app.usecases.cycle.authorization import Authorization
from app.usecases.delivery.feedback import Feedback
from app.usecases.delivery.spawner import Dispatch
from app.usecases.delivery.subjects import START, StartSubject
from app.usecases.unit_of_work import InUnitOfWork, UnitOfWork
from domain.authorize import steering_logins
from domain.errors import TrackerError
from domain.events import Event, Level
from domain.ledger import Ledger, Screen, StartRequest, Turn, screen
from domain.model import Comment, CommentKind, Reaction, SessionRecord, WorkItem
from domain.notice import parked_notice
from domain.park import FailedTurn, Park, Unpark
from domain.parking import park, resume_prompt
from domain.ports import TrackerPort
from domain.prompts import spawn_prompt
from domain.receipts import Receipt, delivery_tag, receipt_line
from domain.refs import WorkItemRef

RESUME = "resume"  # the reason of the ledger's start request that carries a resume prompt's attempts


def resume_turn(turn: Turn) -> bool:
    """The turn of a resume prompt (its id is its delivery id), not of a comment."""
    return turn.comment_id.startswith(f"{RESUME}-")


def own_turn(turn: Turn) -> bool:
    """The turn of a prompt of the-loop's own — an item's start, a resume (its id is its delivery id) —
    not of a comment: nothing to react on, no comment to give back when it fails."""
    return resume_turn(turn) or turn.comment_id.startswith(f"{START}-")


@dataclass(frozen=True, slots=True, kw_only=True)
class ResumeSubject(StartSubject):
    """The one prompt at a reset: a start of its own, whose attempts ride on the ledger's start
    request (reason `resume`) as a start's do; delivered, it opens a turn."""

    park: Park
    failed: tuple[Comment, ...]
    key: str = RESUME

    @property
    def delivery_id(self) -> str:
        return f"{RESUME}-{self.item.ref.slug}-{int(self.park.since.timestamp())}"

    def job(self, item: WorkItem, secret: str) -> Dispatch:
        line = receipt_line(self.delivery_id, delivery_tag(secret, self.delivery_id))
        prompt = resume_prompt(item.ref, self.park, self.failed, receipt=line)
        return Dispatch(item, prompt, spawn_prompt(item, receipt=line) + "\n" + prompt, self.delivery_id, line)

    def delivered(self, ledger: Ledger, *, at: datetime, reason: str, spawn: str) -> Ledger:
        return replace(ledger, start=None).turn_open(Turn(self.delivery_id, CommentKind.ISSUE_COMMENT, spawn))


@dataclass(kw_only=True, eq=False)
class Parking(InUnitOfWork):
    uow: UnitOfWork
    feedback: Feedback
    tracker_for: Callable[[WorkItemRef], TrackerPort]
    authorization: Authorization  # who may steer: a comment edited since by someone else is not quoted

    def failed(self, record: SessionRecord, turn: Turn, receipt: Receipt, item: WorkItemRef) -> SessionRecord:
        """A turn ended in an API failure: 😕 on its comment, the item parked (or the episode it is
        in grown), and the episode's one notice. The wait counts from when the turn failed (its
        receipt's time), not from the cycle that read it."""
        now = self.clock.now()
        failed_at = min(receipt.at, now) if receipt.at is not None else now
        failed = None if own_turn(turn) else FailedTurn(turn.comment_id, turn.kind)
        if failed is not None:
            self.feedback.react(Comment(turn.comment_id, item, None, "", now, kind=turn.kind), Reaction.FAILED)
        decided = park(receipt.detail, receipt.message, comment=failed, now=failed_at, previous=record.park)
        parked = decided.choice
        if record.park is None or record.park.resuming:
            self.events.emit(
                Event.SESSION_PARKED,
                level=Level.WARNING,
                work_item=str(item),
                cause=parked.cause.value,
                since=parked.since.isoformat(),
                until=parked.until.isoformat() if parked.until else None,
                rule=parked.rule.value,
                reason=decided.reason,
                comment_id=turn.comment_id,
            )
        return self._save(replace(record, park=parked))

    def tell(self, record: SessionRecord) -> SessionRecord:
        """The episode's notice, once (a failed post is tried again next cycle)."""
        parked = record.park
        if parked is None or parked.noticed or parked.resuming:
            return record
        body = parked_notice(record.item, parked)
        posted = self.feedback.notify(record.item, body, notice="parked", cause=parked.cause.value)
        if posted is None:
            return record
        return self._save(replace(record, park=replace(parked, noticed=True, notice_id=posted)))

    def holds(self, record: SessionRecord | None) -> bool:
        """Parked, and its reset has not come: nothing is pasted."""
        parked = record.park if record is not None else None
        return parked is not None and not parked.resuming and not parked.due(self.clock.now())

    def due(self, record: SessionRecord | None) -> bool:
        parked = record.park if record is not None else None
        return parked is not None and parked.due(self.clock.now())

    def release(self, record: SessionRecord) -> SessionRecord:
        """`the-loop resume` on a parked item: its reset is now."""
        parked = record.park
        if parked is None or parked.resuming:
            return record
        return self._save(replace(record, park=replace(parked, until=self.clock.now())))

    def resume(
        self, item: WorkItem, ledger: Ledger, record: SessionRecord, *, by: Unpark
    ) -> tuple[Ledger, ResumeSubject]:
        """The reset came: the park is marked resumed (kept, so a failure right after doubles the
        wait) and the resume prompt's subject made, with the failed comments as they are now."""
        parked = record.park
        assert parked is not None
        now = self.clock.now()
        comments = tuple(c for c in (self._fetch(item.ref, f, now) for f in parked.comments) if c is not None)
        request = ledger.start if ledger.start and ledger.start.reason == RESUME else StartRequest(RESUME, now)
        ledger = self.store.save_ledger(replace(ledger, start=request))
        self.events.emit(
            Event.SESSION_UNPARKED,
            work_item=str(item.ref),
            by=by.value,
            comments=[f.comment_id for f in parked.comments],
        )
        return ledger, ResumeSubject(item, request, park=parked, failed=comments)

    def resumed(self, record: SessionRecord, *, by: Unpark) -> SessionRecord:
        """The resume prompt went in: the park ended, and its notice is edited to say when and by
        what (best-effort: a failed edit is reported, the park ends all the same)."""
        parked = record.park
        if parked is None or parked.resuming:
            return record
        now = self.clock.now()
        if parked.notice_id:
            body = parked_notice(record.item, parked, ended=(now, by))
            self.feedback.amend(record.item, parked.notice_id, body, notice="unparked", by=by.value)
        return self._save(replace(record, park=replace(parked, resumed_at=now)))

    def done(self, record: SessionRecord) -> SessionRecord:
        """The resume prompt's turn ended well: its comments were acted on, and each gets the
        reaction of a turn ended, as a comment whose first turn ended well does (the park stays,
        resumed, so a failure right after still doubles the wait)."""
        parked = record.park
        if parked is None or not parked.resuming or not parked.comments:
            return record
        now = self.clock.now()
        for failed in parked.comments:
            self.feedback.react(
                Comment(failed.comment_id, record.item, None, "", now, kind=failed.kind), Reaction.TURN_ENDED
            )
        return self._save(replace(record, park=replace(parked, comments=())))

    def _fetch(self, item: WorkItemRef, failed: FailedTurn, now: datetime) -> Comment | None:
        """The comment as it is now; None when deleted. Unreadable now, or edited since by someone
        not authorized, it is named by its delivery id alone (never lost, never a stranger's text)."""
        stub = Comment(failed.comment_id, item, None, "", now, kind=failed.kind)
        try:
            found = self.tracker_for(item).comment(item, failed.comment_id, failed.kind)
        except TrackerError:
            return stub
        if found is None:
            return None
        if screen(found, authorized=self.authorization.of(steering_logins([found]))) is not Screen.CANDIDATE:
            return stub
        return found

    def _save(self, record: SessionRecord) -> SessionRecord:
        # changed meanwhile (closed, reset): what is stored decides
        saved = self.uow.save(self.store.save_session, read=lambda: self.store.session(record.item), value=record)
        return saved.value or record
