"""One delivery attempt: look for an earlier attempt's receipt, spend the attempt, get the prompt
in, wait for the harness to confirm it, and record the truth — delivered only when confirmed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from app.usecases.delivery.dispatcher import Dispatcher
from app.usecases.delivery.feedback import Feedback
from app.usecases.delivery.spawner import Dispatch, Result
from app.usecases.delivery.subjects import Subject
from app.usecases.delivery.watch import HarnessWatch, Verdict, Watched
from app.usecases.unit_of_work import InUnitOfWork, UnitOfWork
from domain.asks import blocked_episode, waiting_on
from domain.errors import TrackerError
from domain.events import Event, Level
from domain.ledger import DeliveryState, Ledger, Resolution
from domain.model import Comment, HarnessSpec, Reaction, SessionRecord, SessionStatus, WorkItem
from domain.notice import blocked_notice
from domain.policy import Outcome
from domain.ports import ReceiptPort, TrackerPort
from domain.receipts import ReceiptKind, ReceiptMode, conversation_of
from domain.redaction import comment_fields
from domain.refs import WorkItemRef
from domain.routing import Routing

if TYPE_CHECKING:
    from app.usecases.cycle.cycle_summary import CycleSummary

RECENT_DELIVERIES = 20
NOT_CLEARABLE = "the item's tmux session is held by a session that is not running and could not be cleared"
Step = tuple[Ledger, SessionRecord | None, bool]  # the ledger and record after it; whether later ones may go


@dataclass(frozen=True, slots=True)
class DeliveryConfig:
    max_retries: int
    version: str
    secret: str  # keys the receipt tags: only the-loop can name a delivery in a receipt


@dataclass
class _Run:
    """One attempt in progress: what it is for, and the ledger and record as they are now."""

    item: WorkItem
    subject: Subject
    job: Dispatch
    ledger: Ledger
    record: SessionRecord | None
    summary: CycleSummary
    attempt: int = 0  # this attempt's number, once spent

    def fields(self) -> dict[str, Any]:
        found: dict[str, Any] = {"work_item": str(self.item.ref), "delivery_id": self.job.delivery_id}
        if self.subject.comment is not None:
            found["comment_id"] = self.subject.comment.id
        return {**found, "attempt": self.attempt or self.subject.attempts(self.ledger)}


@dataclass(frozen=True, slots=True)
class _Awaited:
    """A prompt pasted into a harness without receipts: confirmed if the pane it went into (its
    spawn's) still runs when `due` comes (monotonic); `after_crash` when no paste of this run
    started the wait (the ledger said pasted)."""

    spawn_id: str
    pane_id: str
    due: float
    after_crash: bool = False


@dataclass(kw_only=True, eq=False)
class Delivery(InUnitOfWork):
    uow: UnitOfWork
    dispatcher: Dispatcher
    watch: HarnessWatch
    receipts: ReceiptPort
    feedback: Feedback
    tracker_for: Callable[[WorkItemRef], TrackerPort]
    config: DeliveryConfig
    routing: Routing
    # receipt-less pastes whose "still alive" wait runs, by item and comment id
    _awaited: dict[tuple[WorkItemRef, str], _Awaited] = field(init=False, default_factory=dict)

    def due(self, ledger: Ledger) -> float | None:
        """When the first of the item's pasted comments awaiting their confirmation falls due."""
        pasted = {p.comment.id for p in ledger.pending if p.state is DeliveryState.PASTED}
        mine = [(key, a) for (item, key), a in list(self._awaited.items()) if item == ledger.item]
        for key, _ in mine:
            if key not in pasted:  # resolved meanwhile (an operator's reset): nothing to await
                self._awaited.pop((ledger.item, key), None)
        return min((a.due for key, a in mine if key in pasted), default=None)

    def awaits(self, comment: Comment) -> bool:
        """Whether this run pasted `comment` and awaits its confirmation."""
        return (comment.item, comment.id) in self._awaited

    def attempt(
        self,
        item: WorkItem,
        ledger: Ledger,
        record: SessionRecord | None,
        subject: Subject,
        *,
        armed: bool,
        summary: CycleSummary,
    ) -> Step:
        run = _Run(item, subject, subject.job(item, self.config.secret), ledger, record, summary)
        settled = self._settled_before(run)
        if settled is not None:
            return settled
        if self._spent(run):
            result = Result(
                Outcome.RETRY, "every attempt was spent without an outcome (the daemon stopped mid-delivery)"
            )
        elif record is None and not armed:
            result = Result(Outcome.NO_SESSION, "no session and spawning is not armed for this item")
        else:
            result = self.dispatcher.dispatch(record, run.job, lambda: self._spend(run))
        run.record = result.record or run.record
        if result.outcome is Outcome.BLOCKED:
            return self._blocked(run)
        if result.outcome is Outcome.LATER:
            return run.ledger, run.record, False  # no attempt: the next cycle tries again
        if result.outcome.went_in:
            return self._went_in(run, result)
        if result.outcome in {Outcome.SKIPPED_OCCUPIED, Outcome.NO_SESSION}:
            return self._skipped(run, result.outcome)
        return self._failed(run, result.reason, result.outcome.value, screen=result.screen)

    def _settled_before(self, run: _Run) -> Step | None:
        """What an earlier attempt or the tracker already settled: never paste a comment twice,
        nor one that was deleted."""
        harness = self._harness(run)
        if harness is None:
            return None  # no session and none to start: nothing went in
        retry = run.subject.attempts(run.ledger) > 0
        # an earlier attempt may have landed (a crash, a late receipt)
        landed = self._landed_before(run, harness) if retry else None
        if landed is Verdict.YES:
            return self._confirmed(run, "receipt-on-retry")
        if landed is Verdict.STOPPING:
            return run.ledger, run.record, False
        went_in = self._went_in_before(run, harness)
        if went_in is not None:
            return went_in
        if retry and self._deleted(run.subject):
            return self._gone(run)
        return None

    def _harness(self, run: _Run) -> HarnessSpec | None:
        """The item's harness: its record's, else the one its start names or its route gives."""
        if run.record is not None:
            return self.dispatcher.harness(run.record.harness)
        routed = self.routing.route(run.item)
        chosen = run.job.harness or (routed.harness if routed else "")
        return self.dispatcher.harness(chosen) if chosen else None

    def _deleted(self, subject: Subject) -> bool:
        """Before a retry: a comment deleted meanwhile is not delivered (a failed look is no answer)."""
        comment = subject.comment
        if comment is None:
            return False
        try:
            return self.tracker_for(comment.item).comment(comment.item, comment.id, comment.kind) is None
        except TrackerError:
            return False

    def _gone(self, run: _Run) -> Step:
        now = self.clock.now()
        run.ledger = run.subject.settled(run.ledger, Resolution.SKIPPED, at=now, version="", reason="comment-deleted")
        self._save(run)
        self.events.emit(Event.DISPATCH_DROPPED, level=Level.WARNING, reason="comment-deleted", **run.fields())
        run.summary.add(skipped=1)
        return run.ledger, run.record, True

    def _landed_before(self, run: _Run, harness: HarnessSpec) -> Verdict | None:
        """A receipt of an earlier attempt names the prompt (YES). Seen under bench.chaos --harness
        claude: a crash cut the spawn that carries it on its command line while the harness started,
        which says it took the prompt seconds later (Claude Code: 1–2 s after its start): that
        receipt is waited for, as the spawn would have — pasting it now would give it twice. None:
        no receipt, and no such harness runs."""
        record = run.record
        if harness.receipts is ReceiptMode.NONE:
            return None
        if self.receipts.find(run.item.ref, run.job.receipt):
            return Verdict.YES
        spawned = record is not None and run.job.delivery_id in record.recent_delivery_ids
        if record is None or not (spawned or self._cut_short(run)) or not self.watch.running(record):
            return None
        if self.dispatcher.hung(record):
            return None  # it had its whole start and said nothing: the dispatch ends it and starts it again
        return self.watch.wait_confirmed(record, harness, run.job.receipt, spawned=spawned).verdict

    def _cut_short(self, run: _Run) -> bool:
        """A crash cut the attempt after its paste may have gone in (the ledger says pasted, or the
        attempt was under way): its receipt may yet come (opencode's comes after its TUI handed the
        prompt on, `bench.chaos --harness opencode`), so the wait it was cut from is made again."""
        pending = run.ledger.pending_entry(run.subject.key)
        return pending is not None and pending.state in {DeliveryState.PASTED, DeliveryState.ATTEMPTING}

    def _went_in_before(self, run: _Run, harness: HarnessSpec) -> Step | None:
        """Without receipts, a prompt the ledger says went in is confirmed as any paste is, by its
        harness still running `confirmSeconds` after it — until then it is left pasted and later
        comments go. After a crash cut that wait, the wait starts again (pasting
        it again would give it twice), and a harness gone since gets it again (None: nothing went in)."""
        pending = run.ledger.pending_entry(run.subject.key)
        if harness.receipts is not ReceiptMode.NONE or run.record is None or pending is None:
            return None
        if pending.state is not DeliveryState.PASTED:
            return None
        key = (run.item.ref, run.subject.key)
        awaited = self._awaited.get(key)
        if awaited is None:
            due = self.clock.monotonic() + harness.confirm_seconds
            awaited = self._awaited[key] = _Awaited(run.record.spawn_id, run.record.pane_id, due, after_crash=True)
        if self.clock.monotonic() < awaited.due:
            return run.ledger, run.record, True
        del self._awaited[key]
        into = replace(run.record, spawn_id=awaited.spawn_id, pane_id=awaited.pane_id)
        watched = self.watch.alive(into, harness.confirm_seconds)
        if watched.verdict is Verdict.YES:
            return self._confirmed(run, "alive-on-retry" if awaited.after_crash else "alive")
        if awaited.after_crash:
            return None
        return self._unconfirmed(run, watched)

    def _spend(self, run: _Run) -> None:
        """The attempt is spent, and saved, before it is made: a crash mid-delivery still counts."""
        run.ledger = self.store.save_ledger(run.subject.spend(run.ledger))
        run.attempt = run.subject.attempts(run.ledger)
        comment = run.subject.comment
        self.events.emit(Event.DISPATCH_QUEUED, **run.fields(), **(comment_fields(comment) if comment else {}))

    def _spent(self, run: _Run) -> bool:
        return run.subject.attempts(run.ledger) >= max(1, self.config.max_retries)

    def _went_in(self, run: _Run, result: Result) -> Step:
        assert run.record is not None
        run.ledger = run.subject.mark(run.ledger, DeliveryState.PASTED)
        self._save(run)
        self.events.emit(Event.DISPATCH_PASTED, outcome=result.outcome.value, reason=result.reason, **run.fields())
        self._react(run, Reaction.STARTED)
        harness = self.dispatcher.harness(run.record.harness)
        if harness.receipts is ReceiptMode.NONE and result.outcome is Outcome.PASTED and run.subject.comment:
            # its "still alive" wait runs while later comments go; the item is
            # worked again when it falls due (`due`), and the ledger's PASTED settles it then
            due = self.clock.monotonic() + harness.confirm_seconds
            self._awaited[(run.item.ref, run.subject.key)] = _Awaited(run.record.spawn_id, run.record.pane_id, due)
            return run.ledger, run.record, True
        spawned = result.outcome is Outcome.SPAWNED and not result.ready
        watched = self.watch.wait_confirmed(run.record, harness, run.job.receipt, spawned=spawned)
        if watched.verdict is Verdict.YES:
            self._ready_event(run, result)
            return self._confirmed(run, "alive" if harness.receipts is ReceiptMode.NONE else "receipt")
        if watched.verdict is Verdict.STOPPING:  # left pasted: the next run settles it, as after a crash
            return run.ledger, run.record, False
        return self._unconfirmed(run, watched)

    def _unconfirmed(self, run: _Run, watched: Watched) -> Step:
        self.events.emit(
            Event.DISPATCH_UNCONFIRMED,
            level=Level.WARNING,
            reason=watched.reason,
            screen=watched.screen,
            **run.fields(),
        )
        run.ledger = run.subject.mark(run.ledger, DeliveryState.UNCONFIRMED)
        return self._failed(run, f"unconfirmed: {watched.reason}", "unconfirmed")

    def _ready_event(self, run: _Run, result: Result) -> None:
        if result.outcome is not Outcome.SPAWNED or run.record is None:
            return
        ready = next((r for r in self.watch.receipts(run.record) if r.kind is ReceiptKind.READY), None)
        spawned_at = run.record.spawned_at
        took = (ready.at - spawned_at).total_seconds() if ready and ready.at and spawned_at else None
        self.events.emit(
            Event.SESSION_READY,
            work_item=str(run.item.ref),
            source=ready.source if ready else "alive",
            seconds=took,
            pane=run.record.pane_id,
        )

    def _confirmed(self, run: _Run, confirmed_by: str) -> Step:
        now = self.clock.now()
        spawn = run.record.spawn_id if run.record else ""
        run.ledger = run.subject.delivered(run.ledger, at=now, reason=f"confirmed:{confirmed_by}", spawn=spawn)
        if run.record is not None:
            recent = (*run.record.recent_delivery_ids, run.job.delivery_id)[-RECENT_DELIVERIES:]
            # a harness that names its conversations (Codex) said which in its ready receipt
            named = self.dispatcher.harness(run.record.harness).names_its_conversations
            learned = conversation_of(self.watch.receipts(run.record)) if named else ""
            run.record = replace(
                run.record,
                harness_session_id=learned or run.record.harness_session_id,
                status=SessionStatus.ACTIVE,
                recent_delivery_ids=tuple(dict.fromkeys(recent)),
                updated_at=now,
                last_event=Event.DISPATCH_SUCCEEDED.value,
            )
        self._save(run)
        fields = run.fields()
        self.events.emit(Event.DISPATCH_CONFIRMED, confirmed_by=confirmed_by, **fields)
        self.events.emit(Event.DISPATCH_SUCCEEDED, confirmed_by=confirmed_by, **fields)
        if run.subject.comment is not None:
            self.events.emit(Event.POLL_COMMENT_FORWARDED, **fields)
            run.summary.add(delivered=1)
        else:
            run.summary.add(spawned=1)
        self._react(run, Reaction.SUCCEEDED)
        return run.ledger, run.record, True

    def _blocked(self, run: _Run) -> Step:
        """No attempt, no budget: the comment waits, and the item hears once per episode."""
        assert run.record is not None
        # once per episode (one turn's dialogs), not once per dialog
        receipts = self.watch.receipts(run.record)
        dialog = blocked_episode(receipts)
        if not dialog and self.dispatcher.harness(run.record.harness).blocked_screens:
            dialog = f"screen:{run.record.spawn_id}"  # seen on its screen only, one episode a spawn
        if dialog and run.record.blocked_notice != dialog:
            waiting = waiting_on(receipts, taken=self.watch.taken(run.record, receipts))  # what on, since when
            self.events.emit(
                Event.SESSION_BLOCKED,
                level=Level.WARNING,
                waiting_on=waiting.on if waiting else None,
                since=waiting.since.isoformat() if waiting and waiting.since else None,
                **run.fields(),
            )
            self.feedback.notify(run.item.ref, blocked_notice(run.item.ref), notice="blocked")
            run.record = replace(run.record, blocked_notice=dialog)
            self._save(run)
        return run.ledger, run.record, False

    def _skipped(self, run: _Run, outcome: Outcome) -> Step:
        now = self.clock.now()
        attempts = run.subject.attempts(run.ledger)
        if outcome is Outcome.SKIPPED_OCCUPIED:
            self._notify(run, NOT_CLEARABLE, attempts)  # before the ledger's write: see _failed
        run.ledger = run.subject.settled(run.ledger, Resolution.SKIPPED, at=now, version="", reason=outcome.value)
        self._save(run)
        if outcome is Outcome.NO_SESSION:
            self.events.emit(Event.DISPATCH_DROPPED, level=Level.WARNING, reason="no-session", **run.fields())
        self._react(run, Reaction.FAILED)
        run.summary.add(skipped=1)
        return run.ledger, run.record, True

    def _failed(self, run: _Run, reason: str, outcome: str, *, screen: str = "") -> Step:
        spent = self._spent(run)
        extra = {"screen": screen} if screen else {}
        self.events.emit(
            Event.DISPATCH_FAILED,
            level=Level.WARNING,
            error=reason,
            outcome=outcome,
            will_retry=not spent,
            **extra,
            **run.fields(),
        )
        self._react(run, Reaction.FAILED)
        attempts = run.subject.attempts(run.ledger)
        if spent:
            # the notice goes before the ledger's write: a kill between the two posts it again next
            # run, where the other order would leave the comment resolved and no one told
            self.events.emit(
                Event.POLL_COMMENT_FAILED, level=Level.ERROR, attempts=attempts, will_retry=False, **run.fields()
            )
            self._notify(run, f"{attempts} delivery attempts failed", attempts)
            run.ledger = run.subject.settled(
                run.ledger, Resolution.ABANDONED, at=self.clock.now(), version=self.config.version, reason=outcome
            )
        else:
            run.ledger = run.subject.mark(run.ledger, DeliveryState.FAILED)
        self._save(run)
        if spent:
            run.summary.add(abandoned=1)
        else:
            run.summary.add(failed=1)
        return run.ledger, run.record, False

    def _notify(self, run: _Run, reason: str, attempts: int) -> None:
        body = run.subject.notice(attempts=attempts, reason=reason)
        fields = {"comment_id": run.subject.key, "attempts": attempts}
        self.feedback.notify(run.item.ref, body, giveup=run.subject.comment is not None, **fields)

    def _react(self, run: _Run, reaction: Reaction) -> None:
        if run.subject.comment is not None:
            self.feedback.react(run.subject.comment, reaction)

    def _save(self, run: _Run) -> None:
        with self.store.transaction():
            run.ledger = self.store.save_ledger(run.ledger)
            if run.record is not None:
                run.record = self.store.save_session(run.record)
