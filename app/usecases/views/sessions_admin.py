"""Sessions by hand: list them with their probed tmux state, attach, reset, close, start."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import timedelta

from app.usecases.cycle.meta import armed_floor_key, save_requests_made
from app.usecases.delivery.closing import Closer
from app.usecases.delivery.switching import HarnessSwitch
from app.usecases.delivery.watch import HarnessWatch
from app.usecases.unit_of_work import InUnitOfWork, Lost, UnitOfWork
from app.usecases.views.session_listing import STOPPED, SessionsListing, SessionView
from app.usecases.views.session_shown import HeldItem
from domain.errors import LoopError
from domain.events import Event
from domain.ledger import StartRequest
from domain.model import ClosedBy, SessionRecord, SessionState, SessionStatus
from domain.ports import TmuxPort
from domain.refs import TmuxTarget, WorkItemRef

__all__ = ["STOPPED", "AdminConfig", "Attachment", "ResetPlan", "SessionView", "SessionsAdmin", "UnknownWorkItem"]

OPERATOR = "operator"  # the `source` of events the operator's commands write, and the close reason
RESET_MARGIN = timedelta(seconds=1)  # timestamps are whole seconds: the reset's own second is history


class UnknownWorkItem(LoopError):
    """The state store knows nothing of this work item (exit status 1)."""

    def __init__(self, item: WorkItemRef, *, what: str = "session record or ledger") -> None:
        super().__init__(f"unknown work item {item}: no {what} in the state store (see `the-loop sessions list`)")
        self.item = item


@dataclass(frozen=True, slots=True)
class AdminConfig:
    grace_seconds: float = 10.0  # SIGTERM, then SIGKILL, when a reset ends a harness
    keep_session_on_close: bool = True


@dataclass(frozen=True, slots=True)
class ResetPlan:
    """What resetting one work item does, decided from a probe before anything changes."""

    item: WorkItemRef
    target: TmuxTarget
    state: SessionState  # with a record: its harness pane's; without: the whole session's
    has_record: bool
    has_ledger: bool
    pane: str = ""  # the harness's own pane
    mark: str = ""

    @property
    def ends_harness(self) -> bool:
        # an unanswered probe may hide a live harness: try, and let tmux's answer decide
        return self.state in {SessionState.LIVE, SessionState.UNKNOWN}

    def describe(self, *, done: bool) -> str:
        end, forget = ("ended", "forgot") if done else ("end", "forget")
        where = f"{self.target.name} ({self.state.value})"
        if not self.has_record:
            # no record, yet a ledger: a first spawn refused by a live occupant of the item's name
            kill = "killed" if done else "kill"
            harness = (
                f"{kill} the session {where}, which the-loop has no record of"
                if self.ends_harness
                else (f"no live session in {where}")
            )
        else:
            harness = f"{end} the harness in {where}" if self.ends_harness else f"no live harness in {where}"
        kept = [name for name, has in (("session record", self.has_record), ("ledger", self.has_ledger)) if has]
        return f"{self.item}: {harness}; {forget} its {' and '.join(kept)}"


@dataclass(frozen=True, slots=True)
class Attachment:
    target: TmuxTarget
    read_only: bool
    forced: bool  # read-only because the session is closed, not because it was asked
    hibernated: bool = False  # its agent hibernated, and nothing of its session is left to attach to


@dataclass(kw_only=True, eq=False)
class SessionsAdmin(InUnitOfWork):
    uow: UnitOfWork
    views: SessionsListing  # what it shows, read from the same store
    tmux: TmuxPort
    watch: HarnessWatch
    closer: Closer
    config: AdminConfig
    switch: HarnessSwitch | None = None

    @property
    def shared(self) -> bool:
        return self.views.shared

    def listing(self, status: SessionStatus | str | None = None) -> list[SessionView]:
        return self.views.listing(status)

    def listed(self, status: SessionStatus | str | None = None) -> list[SessionView | HeldItem]:
        return self.views.listed(status)

    def view(self, item: WorkItemRef) -> SessionView:
        """One item's session, looked at as `listing` looks at each (only its own tmux is asked)."""
        return self.views.viewed(self._record(item))

    def attachment(self, item: WorkItemRef, *, read_only: bool) -> Attachment:
        record = self._record(item)
        forced = record.status is SessionStatus.CLOSED and not read_only
        # a hibernation removes the agent's dead pane, and the session unless an operator's window holds it
        gone = record.hibernated_at is not None and self.tmux.session_state(record.target) is SessionState.ABSENT
        return Attachment(record.target, read_only=read_only or forced, forced=forced, hibernated=gone)

    def attach(self, attachment: Attachment) -> int:
        return self.tmux.attach(attachment.target, read_only=attachment.read_only)

    def plan_reset(self, items: Iterable[WorkItemRef] | None) -> list[ResetPlan]:
        """One plan per item (None: every item the store knows); `UnknownWorkItem` before any probe."""
        wanted = list(dict.fromkeys(self.store.items() if items is None else items))
        found = [(item, self.store.session(item), self.store.ledger(item) is not None) for item in wanted]
        for item, record, has_ledger in found:
            if record is None and not has_ledger:
                raise UnknownWorkItem(item)
        plans = []
        for item, record, has_ledger in found:
            if record is None:
                state = self.tmux.session_state(item.target)
                plans.append(ResetPlan(item, item.target, state, False, has_ledger))
                continue
            probe = self.tmux.probe(record.target, mark=record.spawn_id, pane=record.pane_id)
            pane = probe.pane or record.pane_id
            plans.append(ResetPlan(item, record.target, probe.harness, True, has_ledger, pane, record.spawn_id))
        return plans

    def reset(self, plan: ResetPlan, *, source: str = OPERATOR) -> None:
        """End the harness, then forget: a harness that could not be ended keeps its record."""
        if plan.ends_harness and plan.has_record:
            self.tmux.terminate_harness(
                plan.target, grace_seconds=self.config.grace_seconds, pane=plan.pane, mark=plan.mark
            )
        elif plan.ends_harness:
            self.tmux.kill(plan.target)  # the operator's remedy for a live occupant of the item's name
        with self.store.transaction():
            forgotten = self.store.session(plan.item)
            if forgotten is not None:  # a number given on the item is never given again
                save_requests_made(self.store, plan.item, forgotten.requests_made)
            self.store.forget(plan.item)
            # its next first sight must not deliver again what was said before: history from now
            floor = self.clock.now() + RESET_MARGIN
            self.store.save_meta(armed_floor_key(plan.item), floor.isoformat())
        self.watch.forget(plan.item)  # no ledger left to retry from, the harness ended: nothing reads them
        self.events.emit(
            Event.SESSION_RESET,
            source=source,
            work_item=str(plan.item),
            target=plan.target.name,
            state_before=plan.state.value,
            harness_ended=plan.ends_harness,
            forgot_record=plan.has_record,
            forgot_ledger=plan.has_ledger,
        )

    def close(self, item: WorkItemRef, *, keep_tmux: bool | None, source: str = "poller") -> bool:
        """Close by hand; False when it was closed already and there is nothing left to do."""
        record = self._record(item)
        keep = self.config.keep_session_on_close if keep_tmux is None else keep_tmux
        if record.status is SessionStatus.CLOSED and keep:
            return False
        self.closer.close(record, reason=OPERATOR, keep_tmux=keep, by=ClosedBy.OPERATOR, source=source)
        return True

    def reopen(self, item: WorkItemRef, *, source: str = OPERATOR) -> bool:
        """Undo a close (an operator's holds until this): the session is active again, and the next
        comment is delivered, respawning or resuming the harness if it is gone. False when it was
        not closed."""
        record = self._record(item)
        if record.status is not SessionStatus.CLOSED:
            return False
        reopened: list[SessionRecord] = []  # the closed record the save landed on

        def opened(closed: SessionRecord) -> SessionRecord:
            saved = self.store.save_session(
                replace(
                    closed,
                    status=SessionStatus.ACTIVE,
                    closed_by=None,
                    closed_notice="",
                    updated_at=self.clock.now(),
                    last_event=Event.SESSION_REOPENED.value,
                )
            )
            reopened.append(closed)
            return saved

        # the daemon may save the record meanwhile: decided again while it is still closed; a
        # conflict on every try reaches the operator, whose command is then not done
        saved = self.uow.save(
            opened,
            read=lambda: self.store.session(item),
            value=record,
            tries=3,
            again=lambda stored: stored.status is SessionStatus.CLOSED,
            lost=Lost.RAISE,
        )
        if saved.value is None:
            raise UnknownWorkItem(item, what="session record")
        if not saved.won:
            return False
        closed_by = reopened[-1].closed_by
        self.events.emit(
            Event.SESSION_REOPENED,
            source=source,
            work_item=str(item),
            target=record.target.name,
            closed_by=closed_by.value if closed_by else None,
        )
        return True

    def start(self, item: WorkItemRef, *, harness: str = "", source: str = OPERATOR) -> str:
        """Ask the daemon to start the item's agent, as `the-loop start [harness]` does: it acts on
        it on the item's lane at its next look at the item (a harness named that is not the one the
        item runs: that one is ended, and the named one started fresh, told on the item). What was
        asked, said for the operator; `ValueError` for a harness the configuration lacks."""
        record, ledger = self.store.session(item), self.store.ledger(item)
        if ledger is None:
            raise UnknownWorkItem(item, what="ledger")
        if record is not None and record.held and record.closed_by is ClosedBy.OPERATOR:
            raise ValueError(f"{item} is closed by the operator: `the-loop sessions reopen --work-item {item}` first")
        named = ""
        if harness:
            known = self.switch.known if self.switch else ()
            named = (self.switch.named(harness) if self.switch else None) or ""
            if not named:
                raise ValueError(f"no harness named {harness!r} (known: {', '.join(known)})")
        wanted = StartRequest(source, self.clock.now(), harness=named)
        self.uow.save(
            lambda current: self.store.save_ledger(replace(current, start=wanted, stopped=False)),
            read=lambda: self.store.ledger(item),
            value=ledger,
            tries=3,
            lost=Lost.RAISE,
        )
        if record is not None:  # written anew: the daemon looks at the item again, idle or not
            now = self.clock.now()
            self.uow.save(
                lambda current: self.store.save_session(
                    replace(current, updated_at=now, last_event=Event.SESSION_START_REQUESTED.value)
                ),
                read=lambda: self.store.session(item),
                value=record,
                tries=3,
            )
        self.events.emit(Event.SESSION_START_REQUESTED, source=source, work_item=str(item), harness=named or None)
        if named and record is not None and record.harness != named:
            return f"{item}: the daemon ends {record.harness} and starts {named} fresh at its next cycle"
        if record is None and not ledger.pending:  # nothing of it changes that the daemon watches
            return f"{item}: its agent starts at the daemon's next look at the item (its next comment or listing)"
        return f"{item}: its agent starts at the daemon's next cycle" + (f" ({named})" if named else "")

    def _record(self, item: WorkItemRef) -> SessionRecord:
        record = self.store.session(item)
        if record is None:
            raise UnknownWorkItem(item, what="session record")
        return record
