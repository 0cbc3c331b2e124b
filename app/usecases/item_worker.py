"""One work item in one cycle: first sight, re-arm, admit, then deliver its comments in order."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from app.usecases.dispatcher import Dispatch, Dispatcher, Result
from domain.errors import TrackerError
from domain.events import Event, Level
from domain.ledger import Ledger, Resolution, is_authorized
from domain.model import Comment, Reaction, SessionRecord, SessionStatus, WorkItem
from domain.notice import giveup_notice
from domain.policy import Outcome
from domain.ports import ClockPort, EventSink, StateStore, TrackerPort
from domain.prompts import event_prompt, spawn_prompt
from domain.refs import WorkItemRef

if TYPE_CHECKING:
    from app.usecases.cycle_summary import CycleSummary

NOT_CLEARABLE = "the item's tmux session is held by a session that is not running and could not be cleared"


@dataclass(frozen=True, slots=True)
class WorkerConfig:
    authorized: frozenset[str]
    max_retries: int
    version: str
    reactions: bool = True


@dataclass(frozen=True, slots=True)
class _Attempt:
    comment: Comment
    fields: dict[str, Any]
    summary: CycleSummary


class ItemWorker:
    def __init__(
        self,
        *,
        tracker_for: Callable[[WorkItemRef], TrackerPort],
        store: StateStore,
        events: EventSink,
        clock: ClockPort,
        dispatcher: Dispatcher,
        config: WorkerConfig,
    ) -> None:
        self._tracker_for = tracker_for
        self._store = store
        self._events = events
        self._clock = clock
        self._dispatcher = dispatcher
        self._config = config
        self._rearmed: set[WorkItemRef] = set()  # re-arm at most once per run per item

    def work(self, item: WorkItem, comments: list[Comment], *, armed: bool, summary: CycleSummary) -> None:
        ledger = self._store.ledger(item.ref)
        if ledger is None:
            self._first_sight(item, comments, armed=armed, summary=summary)
            return
        admitted = self._rearm(ledger).admit(comments, authorized=self._config.authorized)
        if admitted != ledger:  # an idle item costs no write
            admitted = self._store.save_ledger(admitted)
        ledger = admitted
        stored = self._store.session(item.ref)
        record = reactivate(stored)
        if record is not None and record != stored:
            record = self._store.save_session(record)  # watched again: active again, so closing sees it
        while (pending := ledger.next_pending) is not None:
            ledger, record, go_on = self._deliver(item, ledger, record, pending.comment, armed=armed, summary=summary)
            if not go_on:
                break

    def _first_sight(self, item: WorkItem, comments: list[Comment], *, armed: bool, summary: CycleSummary) -> None:
        ledger = self._store.save_ledger(Ledger.first_sight(item.ref, now=self._clock.now(), existing=comments))
        self._events.emit(Event.POLL_BASELINED, work_item=str(item.ref), baselined=len(ledger.resolved))
        if (
            not armed
            or not is_authorized(item.author, self._config.authorized)
            or self._store.session(item.ref) is not None
        ):
            return
        prompt = spawn_prompt(item)
        result = self._dispatcher.first_spawn(Dispatch(item, prompt, prompt, f"spawn-{item.ref.slug}"))
        if result.record is not None and result.outcome.delivered:
            self._store.save_session(result.record)
            summary.add(spawned=1)

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

    def _deliver(
        self,
        item: WorkItem,
        ledger: Ledger,
        record: SessionRecord | None,
        comment: Comment,
        *,
        armed: bool,
        summary: CycleSummary,
    ) -> tuple[Ledger, SessionRecord | None, bool]:
        """One attempt; returns the new ledger and record, and whether later comments may go."""
        # attempts that ended in a crash were counted but never judged: spent means abandoned
        crashed_out = ledger.budget_spent(comment.id, max_retries=self._config.max_retries)
        if not crashed_out:
            ledger = self._store.save_ledger(ledger.attempt(comment.id))  # the attempt is spent before it is made
        attempts = ledger.attempts(comment.id)
        fields: dict[str, Any] = {
            "work_item": str(item.ref),
            "delivery_id": str(comment.delivery_id),
            "comment_id": comment.id,
            "attempt": attempts,
        }
        self._events.emit(Event.DISPATCH_QUEUED, **fields)
        if attempts == 1:
            self._react(comment, Reaction.STARTED)
        if crashed_out:
            result = Result(
                Outcome.RETRY, "every attempt was spent without an outcome (the daemon stopped mid-delivery)"
            )
        elif record is None and not armed:
            result = Result(Outcome.NO_SESSION, "no session and spawning is not armed for this item")
        else:
            job = Dispatch(
                item, event_prompt(comment), spawn_prompt(item, first_comment=comment), str(comment.delivery_id)
            )
            result = self._dispatcher.dispatch(record, job)
        return self._record(_Attempt(comment, fields, summary), ledger, record, result)

    def _record(
        self, attempt: _Attempt, ledger: Ledger, record: SessionRecord | None, result: Result
    ) -> tuple[Ledger, SessionRecord | None, bool]:
        comment, fields, summary = attempt.comment, attempt.fields, attempt.summary
        now = self._clock.now()
        record = result.record or record
        outcome = result.outcome
        if outcome.delivered:
            ledger = ledger.resolve(comment.id, Resolution.DELIVERED, at=now, reason=outcome.value)
            ledger, record = self._save(ledger, record)
            self._events.emit(Event.DISPATCH_SUCCEEDED, outcome=outcome.value, reason=result.reason, **fields)
            self._events.emit(Event.POLL_COMMENT_FORWARDED, **fields)
            self._react(comment, Reaction.SUCCEEDED)
            summary.add(delivered=1, spawned=int(outcome is Outcome.SPAWNED))
            return ledger, record, True
        if outcome in {Outcome.SKIPPED_OCCUPIED, Outcome.NO_SESSION}:
            ledger = ledger.resolve(comment.id, Resolution.SKIPPED, at=now, reason=outcome.value)
            ledger, record = self._save(ledger, record)
            if outcome is Outcome.NO_SESSION:
                self._events.emit(Event.DISPATCH_DROPPED, level=Level.WARNING, reason="no-session", **fields)
            self._react(comment, Reaction.FAILED)
            if outcome is Outcome.SKIPPED_OCCUPIED:
                self._notify(comment, ledger.resolved[comment.id].attempts, NOT_CLEARABLE)
            summary.add(skipped=1)
            return ledger, record, True
        return self._failed(attempt, ledger, record, result)

    def _failed(
        self, attempt: _Attempt, ledger: Ledger, record: SessionRecord | None, result: Result
    ) -> tuple[Ledger, SessionRecord | None, bool]:
        comment, fields, summary = attempt.comment, attempt.fields, attempt.summary
        spent = ledger.budget_spent(comment.id, max_retries=self._config.max_retries)
        self._events.emit(
            Event.DISPATCH_FAILED,
            level=Level.WARNING,
            error=result.reason,
            outcome=result.outcome.value,
            will_retry=not spent,
            **fields,
        )
        self._react(comment, Reaction.FAILED)
        attempts = ledger.attempts(comment.id)
        if spent:
            ledger = ledger.resolve(
                comment.id,
                Resolution.ABANDONED,
                at=self._clock.now(),
                version=self._config.version,
                reason=result.outcome.value,
            )
        ledger, record = self._save(ledger, record)
        if spent:
            self._events.emit(
                Event.POLL_COMMENT_FAILED, level=Level.ERROR, attempts=attempts, will_retry=False, **fields
            )
            self._notify(comment, attempts, f"{attempts} delivery attempts failed")
            summary.add(abandoned=1)
        else:
            summary.add(failed=1)
        return ledger, record, False

    def _save(self, ledger: Ledger, record: SessionRecord | None) -> tuple[Ledger, SessionRecord | None]:
        with self._store.transaction():
            ledger = self._store.save_ledger(ledger)
            if record is not None:
                record = self._store.save_session(record)
        return ledger, record

    def _notify(self, comment: Comment, attempts: int, reason: str) -> None:
        """Best-effort: a failure to post is reported, and never changes the ledger."""
        fields: dict[str, Any] = {"work_item": str(comment.item), "comment_id": comment.id, "attempts": attempts}
        try:
            self._tracker_for(comment.item).post_comment(
                comment.item, giveup_notice(comment, attempts=attempts, reason=reason)
            )
        except TrackerError as error:
            self._events.emit(Event.POLL_GIVEUP_REPORT_FAILED, level=Level.WARNING, cause=str(error), **fields)
            return
        self._events.emit(Event.POLL_GIVEUP_REPORTED, **fields)

    def _react(self, comment: Comment, reaction: Reaction) -> None:
        if not self._config.reactions:
            return
        try:
            self._tracker_for(comment.item).react(comment, reaction)
        except TrackerError as error:
            self._events.emit(
                Event.REACTION_FAILED,
                level=Level.WARNING,
                comment_id=comment.id,
                reaction=reaction.value,
                cause=str(error),
            )
            return
        self._events.emit(Event.REACTION_ADDED, comment_id=comment.id, reaction=reaction.value)


def reactivate(record: SessionRecord | None) -> SessionRecord | None:
    """A paused or closed session whose item is watched again is active again."""
    if record is not None and record.status is not SessionStatus.ACTIVE:
        return replace(record, status=SessionStatus.ACTIVE)
    return record
