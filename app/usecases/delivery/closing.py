"""Closing: an item that left the watched list upstream, or that the operator closes or resets."""

from __future__ import annotations

from dataclasses import dataclass, replace

from app.usecases.delivery.workspaces import Workspaces
from app.usecases.unit_of_work import InUnitOfWork, Lost, UnitOfWork
from domain.errors import TmuxFailed, TmuxUnanswered
from domain.events import Event, Level
from domain.ledger import receipts_wanted
from domain.model import ClosedBy, ItemState, SessionRecord, SessionState, SessionStatus
from domain.ports import ReceiptPort, TmuxPort


@dataclass(frozen=True, slots=True)
class CloseConfig:
    kill_harness_on_close: bool = True
    keep_session_on_close: bool = True
    grace_seconds: float = 10.0


@dataclass(kw_only=True, eq=False)
class Closer(InUnitOfWork):
    tmux: TmuxPort
    uow: UnitOfWork
    config: CloseConfig
    workspaces: Workspaces | None = None
    receipts: ReceiptPort | None = None

    def departed(self, record: SessionRecord, state: ItemState) -> bool:
        """Closed or merged → close; still open without the label → pause. True when closed."""
        if state is ItemState.UNLABELED:
            self.store.save_session(
                replace(
                    record,
                    status=SessionStatus.PAUSED,
                    updated_at=self.clock.now(),
                    last_event=Event.SESSION_RETAINED.value,
                )
            )
            self.events.emit(
                Event.SESSION_RETAINED,
                work_item=str(record.item),
                target=str(record.target),
                reason="label removed; session kept, deliveries paused",
            )
            return False
        self.close(record, reason=state.value, keep_tmux=self.config.keep_session_on_close, by=ClosedBy.UPSTREAM)
        return True

    def close(
        self, record: SessionRecord, *, reason: str, keep_tmux: bool, by: ClosedBy, source: str = "poller"
    ) -> None:
        """Close the session; `by` says what reopens it (an operator's or a control comment's close
        holds until they reopen it; an upstream close until the item is watched again)."""
        terminated = self.config.kill_harness_on_close and self._stop(record, keep_tmux=keep_tmux)
        killed = not keep_tmux and self._kill(record)
        # written meanwhile (the poller's delivery): a close stands, so close what is stored now;
        # forgotten meanwhile (a reset): nothing is left to close
        closed = self.uow.save(
            lambda current: self.store.save_session(self._closed(current, by)),
            read=lambda: self.store.session(record.item),
            value=record,
            tries=2,
            lost=Lost.RAISE,
        ).value
        self.events.emit(
            Event.SESSION_CLOSED,
            source=source,
            work_item=str(record.item),
            target=str(record.target),
            reason=reason,
            closed_by=by.value,
            harness_terminated=terminated,
            tmux_killed=killed,
        )
        if self.workspaces is not None and closed is not None:  # removeOnClose, only when clean
            self.workspaces.closed(closed)
        if closed is not None:
            self._forget_receipts(closed, ended=terminated or killed)

    def _forget_receipts(self, record: SessionRecord, *, ended: bool) -> None:
        """The closed item's receipt folders go once nothing can look them up again."""
        if self.receipts is None:
            return
        ended = ended or self.tmux.session_state(record.target) in {SessionState.DEAD, SessionState.ABSENT}
        ledger = self.store.ledger(record.item)
        if receipts_wanted(ledger, harness_ended=ended).choice:
            return
        if ledger is not None and ledger.turns:  # its harness ended: no turn of it can be seen to end any more
            no_turns = replace(ledger, turns=())
            saved = self.uow.save(self.store.save_ledger, read=lambda: self.store.ledger(record.item), value=no_turns)
            if not saved.won:
                return  # the poller wrote it meanwhile: kept, as when anything still reads them
        self.receipts.forget(record.item)

    def _closed(self, record: SessionRecord, by: ClosedBy) -> SessionRecord:
        # a close of what this closer holds closed already is the same closing; any other starts one
        again = record.status is SessionStatus.CLOSED and record.closed_by is by
        return replace(
            record,
            status=SessionStatus.CLOSED,
            closed_by=by,
            closed_notice=record.closed_notice if again else "",
            updated_at=self.clock.now(),
            last_event=Event.SESSION_CLOSED.value,
        )

    def _stop(self, record: SessionRecord, *, keep_tmux: bool) -> bool:
        if not keep_tmux or self.tmux.session_state(record.target) is not SessionState.LIVE:
            return False
        try:
            self.tmux.terminate_harness(
                record.target, grace_seconds=self.config.grace_seconds, pane=record.pane_id, mark=record.spawn_id
            )
        except (TmuxFailed, TmuxUnanswered) as error:
            self.events.emit(
                Event.SESSION_CLOSED,
                level=Level.WARNING,
                work_item=str(record.item),
                reason="harness could not be terminated",
                cause=str(error),
            )
            return False
        return True

    def _kill(self, record: SessionRecord) -> bool:
        try:
            self.tmux.kill(record.target)
        except (TmuxFailed, TmuxUnanswered):
            return self.tmux.session_state(record.target) is SessionState.ABSENT
        return True
